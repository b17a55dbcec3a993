package dev.stealing.samples

import dev.stealing.StealingDispatcher
import dev.stealing.parallelFold
import dev.stealing.parallelForEach
import dev.stealing.parallelMap
import dev.stealing.parallelSort
import kotlinx.coroutines.runBlocking
import java.util.SplittableRandom
import java.util.concurrent.ForkJoinPool
import java.util.concurrent.atomic.AtomicLongArray
import java.util.stream.Collectors
import java.util.stream.IntStream

/**
 * Parallel loops with no grain size: `parallelFold`, `parallelMap`, `parallelForEach` and
 * `parallelSort` on the shared `StealingDispatcher`, each checked against a sequential run and
 * timed next to what a Java user would write (a parallel stream or `Arrays.parallelSort` inside
 * a `ForkJoinPool` of the same size) and a plain loop. The loops are called from outside the
 * pool (`runBlocking`), so they move onto the shared pool and the caller waits.
 *
 * Run: `mvn -q -pl samples -am compile exec:java -Dexec.mainClass=dev.stealing.samples.ParallelLoopsKt`
 */
fun main() {
    val cores = Runtime.getRuntime().availableProcessors()
    val fjp = ForkJoinPool(cores)
    println("parallel loops on $cores cores (StealingDispatcher's shared pool vs ForkJoinPool($cores) vs a plain loop), ${roundsNote()}")

    // A fine-grained reduction: one multiply-add per index.
    val n = 100_000_000
    val expectedSum = (0 until n).fold(0L) { s, i -> s + i.toLong() * i }
    timeEach(
        "sum of i * i, $n indices",
        check = { s: Long -> if (s == expectedSum) null else "sum $s, expected $expectedSum" },
        "parallelFold" to { runBlocking { (0 until n).parallelFold({ 0L }, { s, i -> s + i.toLong() * i }, Long::plus) } },
        "IntStream.parallel() in FJP" to { fjp.submit<Long> { IntStream.range(0, n).parallel().mapToLong { it.toLong() * it }.sum() }.get() },
        "plain loop" to { var s = 0L; for (i in 0 until n) s += i.toLong() * i; s },
    )

    // Uneven work: element i costs about 1 + i / 1000 rounds, so the last is ~1,000 x the first.
    val items = (0 until 1_000_000).toList()
    val expectedMap = items.map(::skewedWork)
    timeEach(
        "skewed map, ${items.size} elements",
        check = { r: List<Long> -> if (r == expectedMap) null else "results differ from List.map" },
        "parallelMap" to { runBlocking { items.parallelMap(::skewedWork) } },
        "parallelStream() in FJP" to { fjp.submit<List<Long>> { items.parallelStream().map(::skewedWork).collect(Collectors.toList()) }.get() },
        "List.map" to { items.map(::skewedWork) },
    )

    // A histogram: parallelForEach with atomic counters.
    val buckets = AtomicLongArray(16)
    runBlocking { (0 until 10_000_000).parallelForEach { i -> buckets.incrementAndGet((i * 31) and 15) } }
    val total = (0 until 16).sumOf { buckets[it] }
    if (total != 10_000_000L) fail("histogram counted $total of 10,000,000")
    println("  histogram of 10M indices in 16 buckets with parallelForEach: ${(0 until 16).map { buckets[it] }.distinct()} per bucket")

    // Sorting 10M random ints.
    val input = IntArray(10_000_000).also { a -> val r = SplittableRandom(42); for (i in a.indices) a[i] = r.nextInt() }
    val sorted = input.copyOf().also { it.sort() }
    val work = IntArray(input.size)
    timeEach(
        "sort of ${input.size} random ints",
        check = { a: IntArray -> if (a.contentEquals(sorted)) null else "not sorted" },
        "parallelSort" to { input.copyInto(work); runBlocking { work.parallelSort() }; work },
        "Arrays.parallelSort in FJP" to { input.copyInto(work); fjp.submit { java.util.Arrays.parallelSort(work) }.get(); work },
        "Arrays.sort" to { input.copyInto(work); java.util.Arrays.sort(work); work },
    )
    fjp.shutdown()
    println("stats of the shared pool: loopPieces = ${StealingDispatcher.stats().loopPieces}, loopSplits = ${StealingDispatcher.stats().loopSplits}")
}

/** Work that grows with [i]: `1 + i / 1000` rounds of a multiply-add chain. */
private fun skewedWork(i: Int): Long {
    var x = i.toLong()
    repeat(1 + i / 1000) { x = x * 6364136223846793005L + 1442695040888963407L }
    return x
}

/** Runs each of [runs] 3 + 5 times, alternating them, checks each result, and prints medians and ratios to the first. */
private fun <T> timeEach(title: String, check: (T) -> String?, vararg runs: Pair<String, () -> T>) {
    val times = runs.associate { it.first to ArrayList<Double>() }
    repeat(8) { round ->
        for ((name, run) in runs) {
            val t0 = System.nanoTime()
            val r = run()
            val ms = (System.nanoTime() - t0) / 1e6
            check(r)?.let { fail("$title, $name: $it") }
            if (round >= 3) times.getValue(name) += ms
        }
    }
    val first = times.getValue(runs[0].first).sorted()[2]
    println("  $title:")
    for ((name, list) in times) {
        val median = list.sorted()[list.size / 2]
        println("    %-30s %8.1f ms  (%.2f x %s)".format(name, median, median / first, runs[0].first))
    }
}
