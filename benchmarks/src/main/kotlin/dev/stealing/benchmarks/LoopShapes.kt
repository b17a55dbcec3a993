package dev.stealing.benchmarks

import dev.stealing.StealingDispatcher
import dev.stealing.forkJoin
import dev.stealing.parallelFold
import dev.stealing.parallelMap
import dev.stealing.parallelSort
import kotlinx.coroutines.runBlocking
import java.util.concurrent.Callable
import java.util.stream.Collectors
import java.util.stream.IntStream

/**
 * The parallel-loop workloads, each on our loops and on the ways a Java or Kotlin user would
 * write it without them. A shape runs on an [ExecutorUnderTest] whose id picks the variant:
 *
 * | shape | `stealing` | peers |
 * |---|---|---|
 * | `sum` | `(0 until 100M).parallelFold({ 0L }, { s, i -> s + i.toLong() * i }, Long::plus)` | `fjp`: `IntStream.range(0, 100M).parallel().mapToLong { it.toLong() * it }.sum()` inside the `ForkJoinPool`; `stealing-forkjoin`: a recursive `forkJoin` with a cut-off of [SUM_CUTOFF] (the best of 2^12..2^22 on the 2-core machine); `single`: a plain `for` loop |
 * | `sum-1worker` | the same `parallelFold` on a `StealingDispatcher(1)` | `single`: the plain loop |
 * | `map-skewed` | `items.parallelMap(::skewed)` over 1M elements whose cost grows with the index (the last about 1,000 x the first) | `fjp`: `items.parallelStream().map(::skewed).collect(toList())` inside the `ForkJoinPool`; `single`: `items.map(::skewed)` |
 * | `sort` | `IntArray.parallelSort()` of 10M random ints | `default`: `Arrays.parallelSort` with default settings (the common pool); `fjp`: `Arrays.parallelSort` called inside the `ForkJoinPool` |
 *
 * [run] returns the time of the loop itself in milliseconds (the sort's copy of its input is
 * not timed) and checks the result.
 */
object LoopShapes {
    val ALL = listOf("sum", "sum-1worker", "map-skewed", "sort")

    /** The executors each shape runs on. */
    val EXECUTORS: Map<String, List<String>> = mapOf(
        "sum" to listOf("stealing", "stealing-forkjoin", "fjp", "single"),
        "sum-1worker" to listOf("stealing", "single"),
        "map-skewed" to listOf("stealing", "fjp", "single"),
        "sort" to listOf("stealing", "default", "fjp"),
    )

    const val SUM_N = 100_000_000

    /** The hand-tuned `forkJoin` sum's cut-off. */
    const val SUM_CUTOFF = 1 shl 16

    const val MAP_N = 1_000_000
    const val SORT_N = 10_000_000

    private val expectedSum: Long = run {
        var s = 0L
        for (i in 0 until SUM_N) s += i.toLong() * i
        s
    }

    private val items: List<Int> by lazy { (0 until MAP_N).toList() }
    private val expectedMapSum: Long by lazy { items.sumOf { skewed(it) } }
    private val sortInput: IntArray by lazy { IntArray(SORT_N).also { a -> val r = java.util.SplittableRandom(42); for (i in a.indices) a[i] = r.nextInt() } }
    private val sortWork: IntArray by lazy { IntArray(SORT_N) }

    /** A pool of one worker for `sum-1worker` (daemon threads; never closed). */
    private val oneWorker: StealingDispatcher by lazy { StealingDispatcher(1, "bench-one-worker") }

    /** Work that grows with [i]: `1 + i / 1000` rounds of a multiply-add chain. */
    fun skewed(i: Int): Long {
        var x = i.toLong()
        repeat(1 + i / 1000) { x = x * 6364136223846793005L + 1442695040888963407L }
        return x
    }

    fun run(shape: String, ex: ExecutorUnderTest): Double = when (shape) {
        "sum", "sum-1worker" -> timed {
            val s = when (ex.id) {
                "stealing" -> runBlocking(if (shape == "sum") ex.dispatcher else oneWorker) { foldSum() }
                "stealing-forkjoin" -> runBlocking(ex.dispatcher) { forkJoinSum(0, SUM_N) }
                "fjp" -> ex.forkJoinPool!!.submit(Callable { IntStream.range(0, SUM_N).parallel().mapToLong { it.toLong() * it }.sum() }).get()
                "single" -> sequentialSum(0, SUM_N)
                else -> throw IllegalArgumentException("$shape does not run on ${ex.id}")
            }
            check(s == expectedSum) { "$shape on ${ex.id}: $s, expected $expectedSum" }
        }
        "map-skewed" -> {
            var out: List<Long> = emptyList()
            val ms = timed {
                out = when (ex.id) {
                    "stealing" -> runBlocking(ex.dispatcher) { items.parallelMap(::skewed) }
                    "fjp" -> ex.forkJoinPool!!.submit(Callable { items.parallelStream().map(::skewed).collect(Collectors.toList()) }).get()
                    "single" -> items.map(::skewed)
                    else -> throw IllegalArgumentException("$shape does not run on ${ex.id}")
                }
            }
            check(out.size == MAP_N && out.sum() == expectedMapSum && out[MAP_N - 1] == skewed(MAP_N - 1)) { "$shape on ${ex.id}: wrong result" }
            ms
        }
        "sort" -> {
            val a = sortWork
            System.arraycopy(sortInput, 0, a, 0, SORT_N)
            val ms = timed {
                when (ex.id) {
                    "stealing" -> runBlocking(ex.dispatcher) { a.parallelSort() }
                    "default" -> java.util.Arrays.parallelSort(a)
                    "fjp" -> ex.forkJoinPool!!.submit { java.util.Arrays.parallelSort(a) }.get()
                    else -> throw IllegalArgumentException("$shape does not run on ${ex.id}")
                }
            }
            for (i in 1 until SORT_N) check(a[i - 1] <= a[i]) { "$shape on ${ex.id}: not sorted at $i" }
            ms
        }
        else -> throw IllegalArgumentException("shape must be one of $ALL, was $shape")
    }

    private suspend fun foldSum(): Long = (0 until SUM_N).parallelFold({ 0L }, { s, i -> s + i.toLong() * i }, Long::plus)

    private fun sequentialSum(lo: Int, hi: Int): Long {
        var s = 0L
        for (i in lo until hi) s += i.toLong() * i
        return s
    }

    private suspend fun forkJoinSum(lo: Int, hi: Int): Long {
        if (hi - lo <= SUM_CUTOFF) return sequentialSum(lo, hi)
        val mid = (lo + hi) ushr 1
        val (a, b) = forkJoin({ forkJoinSum(lo, mid) }, { forkJoinSum(mid, hi) })
        return a + b
    }

    private inline fun timed(block: () -> Unit): Double {
        val t0 = System.nanoTime()
        block()
        return (System.nanoTime() - t0) / 1e6
    }
}
