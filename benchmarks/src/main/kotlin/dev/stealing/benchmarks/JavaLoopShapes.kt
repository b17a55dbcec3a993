package dev.stealing.benchmarks

import dev.stealing.parallelFold
import kotlinx.coroutines.runBlocking
import java.util.Arrays
import java.util.SplittableRandom
import java.util.concurrent.Callable
import java.util.function.Function
import java.util.stream.IntStream

/**
 * The loop workloads of the Java forms (`StealingDispatcher.parallelReduceToLong`,
 * `parallelCollect`, `parallelMap`, `parallelSort` of objects and of doubles), each against the
 * Java standard library on `ForkJoinPool` (executor `fjp`: the stream runs inside
 * `fjp.submit { .. }.get()`, so its tasks go to that pool, and `Arrays.parallelSort` called
 * inside a task of the pool forks into it), plus the Kotlin user's `parallelFold` as a user
 * writes it. On `stealing` the shape calls the pool's own method (no coroutine):
 *
 * | shape | `stealing` | `fjp` |
 * |---|---|---|
 * | `java-sum` | `parallelReduceToLong(0, 100M, 0, i -> (long) i * i, Long::sum)` | `IntStream.range(0, 100M).parallel().mapToLong(i -> (long) i * i).sum()` |
 * | `java-collect` | `parallelCollect(0, 50M, () -> new long[256], (h, i) -> h[bucket(i)]++, merge)` | `IntStream.range(0, 50M).parallel().collect(` the same three `)` |
 * | `java-map-skewed` | `parallelMap(items, LoopShapes::skewed)` over 1M elements ([LoopShapes.skewed]: cost growing to ~1,000 x) | `items.parallelStream().map(LoopShapes::skewed).toList()` |
 * | `java-sort-objects` | `parallelSort(Integer[10M], comparator)` | `Arrays.parallelSort(Integer[10M], comparator)` |
 * | `java-sort-doubles` | `parallelSort(double[10M])` | `Arrays.parallelSort(double[10M])` |
 * | `fold-user` | `runBlocking(pool) { (0 until 100_000_000).parallelFold({ 0L }, { acc, i -> acc + i.toLong() * i }, Long::plus) }`, written out at the call site as a user would | the `java-sum` stream |
 *
 * [run] returns the loop's time in milliseconds (a sort's copy of its input is not timed) and
 * checks the result.
 */
object JavaLoopShapes {
    val ALL = listOf("java-sum", "java-collect", "java-map-skewed", "java-sort-objects", "java-sort-doubles", "fold-user")

    /** Every shape runs on our pool and on `ForkJoinPool`. */
    val EXECUTORS: List<String> = listOf("stealing", "fjp")

    const val SUM_N = 100_000_000
    const val COLLECT_N = 50_000_000
    const val SORT_N = 10_000_000

    private val expectedSum: Long = run {
        var s = 0L
        for (i in 0 until SUM_N) s += i.toLong() * i
        s
    }

    /** The histogram's bucket of index [i]: the top byte of a multiplicative hash. */
    fun bucket(i: Int): Int = (i * -0x61c88647) ushr 24

    private val expectedHistogram: LongArray by lazy { LongArray(256).also { h -> for (i in 0 until COLLECT_N) h[bucket(i)]++ } }
    private val items: List<Int> by lazy { (0 until LoopShapes.MAP_N).toList() }
    private val expectedMapSum: Long by lazy { items.sumOf { LoopShapes.skewed(it) } }
    private val objectInput: Array<Int> by lazy { val r = SplittableRandom(43); Array(SORT_N) { r.nextInt() } }
    private val objectWork: Array<Int> by lazy { objectInput.copyOf() }
    private val doubleInput: DoubleArray by lazy { val r = SplittableRandom(44); DoubleArray(SORT_N) { r.nextDouble(-1e9, 1e9) } }
    private val doubleWork: DoubleArray by lazy { DoubleArray(SORT_N) }
    private val byValue: Comparator<Int> = Comparator { a, b -> a.compareTo(b) }

    fun run(shape: String, ex: ExecutorUnderTest): Double {
        require(ex.id in EXECUTORS) { "$shape runs on $EXECUTORS, not ${ex.id}" }
        val pool = ex.stealing
        val fjp = ex.forkJoinPool
        return when (shape) {
            "java-sum", "fold-user" -> {
                var s = 0L
                val ms = timed {
                    s = when {
                        fjp != null -> fjp.submit(Callable { IntStream.range(0, SUM_N).parallel().mapToLong { it.toLong() * it }.sum() }).get()
                        shape == "java-sum" -> pool!!.parallelReduceToLong(0, SUM_N, 0L, { i -> i.toLong() * i }, java.lang.Long::sum)
                        else -> runBlocking(pool!!) { (0 until 100_000_000).parallelFold({ 0L }, { acc, i -> acc + i.toLong() * i }, Long::plus) }
                    }
                }
                check(s == expectedSum) { "$shape on ${ex.id}: $s, expected $expectedSum" }
                ms
            }
            "java-collect" -> {
                var h = LongArray(0)
                val ms = timed {
                    h = if (fjp != null) {
                        fjp.submit(Callable { IntStream.range(0, COLLECT_N).parallel().collect({ LongArray(256) }, { c, i -> c[bucket(i)]++ }, ::addInto) }).get()
                    } else {
                        pool!!.parallelCollect(0, COLLECT_N, { LongArray(256) }, { c, i -> c[bucket(i)]++ }, ::addInto)
                    }
                }
                check(h.contentEquals(expectedHistogram)) { "$shape on ${ex.id}: wrong histogram" }
                ms
            }
            "java-map-skewed" -> {
                var out: List<Long> = emptyList()
                val ms = timed {
                    out = if (fjp != null) {
                        fjp.submit(Callable { items.parallelStream().map(LoopShapes::skewed).toList() }).get()
                    } else {
                        pool!!.parallelMap(items, Function(LoopShapes::skewed))
                    }
                }
                check(out.size == LoopShapes.MAP_N && out.sum() == expectedMapSum) { "$shape on ${ex.id}: wrong result" }
                ms
            }
            "java-sort-objects" -> {
                val a = objectWork
                System.arraycopy(objectInput, 0, a, 0, SORT_N)
                val ms = timed { if (fjp != null) fjp.submit { Arrays.parallelSort(a, byValue) }.get() else pool!!.parallelSort(a, byValue) }
                for (i in 1 until SORT_N) check(a[i - 1] <= a[i]) { "$shape on ${ex.id}: not sorted at $i" }
                ms
            }
            "java-sort-doubles" -> {
                val a = doubleWork
                System.arraycopy(doubleInput, 0, a, 0, SORT_N)
                val ms = timed { if (fjp != null) fjp.submit { Arrays.parallelSort(a) }.get() else pool!!.parallelSort(a) }
                for (i in 1 until SORT_N) check(a[i - 1] <= a[i]) { "$shape on ${ex.id}: not sorted at $i" }
                ms
            }
            else -> throw IllegalArgumentException("shape must be one of $ALL, was $shape")
        }
    }

    /** The histogram combiner: adds [other]'s counts into [into]. */
    private fun addInto(into: LongArray, other: LongArray) {
        for (b in into.indices) into[b] += other[b]
    }

    private inline fun timed(block: () -> Unit): Double {
        val t0 = System.nanoTime()
        block()
        return (System.nanoTime() - t0) / 1e6
    }
}
