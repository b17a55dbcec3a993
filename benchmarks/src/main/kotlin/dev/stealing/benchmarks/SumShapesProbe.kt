package dev.stealing.benchmarks

import dev.stealing.StealingDispatcher
import dev.stealing.parallelFold
import kotlinx.coroutines.runBlocking
import java.util.concurrent.Callable
import java.util.concurrent.ForkJoinPool
import java.util.stream.IntStream

/**
 * The sum of `i.toLong() * i` over 0 until 100M written the ways a user writes it, alternated
 * in one JVM with no pause between runs (as a user's own measurement does; the report instead
 * pauses so that each pool's threads have parked): prints the min and median milliseconds of
 * each variant over the last two thirds of the rounds.
 *
 * ```
 * java -cp benchmarks/target/benchmarks.jar dev.stealing.benchmarks.SumShapesProbe user,stream,plain 40
 * ```
 *
 * Variants: `user`, `(0 until 100_000_000).parallelFold({ 0L }, { acc, i -> acc + i.toLong() * i },
 * Long::plus)` in `runBlocking(pool)`; `user-shared`, the same in a plain `runBlocking { }`, so it
 * moves onto the shared pool; `java`, `pool.parallelReduceToLong`; `stream`,
 * `IntStream.range(..).parallel().mapToLong(..).sum()` inside `ForkJoinPool(2)`; `plain`, a `for`
 * loop on the calling thread. The pool and the `ForkJoinPool` have 2 threads.
 */
object SumShapesProbe {
    @JvmStatic
    fun main(args: Array<String>) {
        val variants = args[0].split(',')
        val rounds = args.getOrNull(1)?.toInt() ?: 30
        val pool = StealingDispatcher(2, "probe")
        val fjp = ForkJoinPool(2)
        val times = variants.associateWith { ArrayList<Double>() }
        var sink = 0L
        repeat(rounds) { r ->
            for (v in variants) {
                val t0 = System.nanoTime()
                sink += when (v) {
                    "user" -> runBlocking(pool) { (0 until 100_000_000).parallelFold({ 0L }, { acc, i -> acc + i.toLong() * i }, Long::plus) }
                    "user-shared" -> runBlocking { (0 until 100_000_000).parallelFold({ 0L }, { acc, i -> acc + i.toLong() * i }, Long::plus) }
                    "java" -> pool.parallelReduceToLong(0, 100_000_000, 0L, { i -> i.toLong() * i }, java.lang.Long::sum)
                    "stream" -> fjp.submit(Callable { IntStream.range(0, 100_000_000).parallel().mapToLong { it.toLong() * it }.sum() }).get()
                    "plain" -> { var s = 0L; for (i in 0 until 100_000_000) s += i.toLong() * i; s }
                    else -> error(v)
                }
                val ms = (System.nanoTime() - t0) / 1e6
                if (r >= rounds / 3) times.getValue(v) += ms
            }
        }
        for ((v, t) in times) {
            t.sort()
            println("%-12s min %7.1f  median %7.1f ms".format(v, t.first(), t[t.size / 2]))
        }
        println("sink $sink")
        pool.close()
        fjp.shutdown()
    }
}
