package dev.stealing.samples

import dev.stealing.StealingDispatcher
import dev.stealing.awaitInline
import dev.stealing.forkJoin
import dev.stealing.parallelFold
import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.asCoroutineDispatcher
import kotlinx.coroutines.async
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import java.util.concurrent.ForkJoinPool
import java.util.stream.LongStream

/**
 * The main demo, the README's first command: a divide-and-conquer job (recursive Fibonacci with
 * one `async` per node and no cut-off, the classic stress for a scheduler) on
 * [Dispatchers.Default], on a `ForkJoinPool` used as a dispatcher and on [StealingDispatcher]
 * (`await`, `awaitInline`, and [forkJoin] in place of `async`), then a parallel loop
 * (`parallelFold`) next to a parallel stream in a `ForkJoinPool` and a plain loop. The executors
 * alternate round by round; the table gives the medians. Each result is checked.
 *
 * Run: `mvn -B -ntp -q -pl samples -am compile exec:java` from the repository root (it builds the
 * library and the samples first; nothing is installed).
 */
fun main() {
    val cores = Runtime.getRuntime().availableProcessors()
    val n = 27
    val fibExpected = fibSequential(n)
    val size = 50_000_000L
    val sumExpected = (0 until size).fold(0L) { s, i -> s + i * i }
    val fjp = ForkJoinPool(cores)
    val fjpDispatcher = fjp.asCoroutineDispatcher()
    fun onDispatcher(d: CoroutineDispatcher, job: suspend () -> Long): () -> Long = { runBlocking { withContext(d) { job() } } }
    val fibJob = "fib($n), a task per node"
    val loopJob = "sum of i * i, ${size / 1_000_000}M indices"
    // job, executor, run; the first row of each job is the baseline of its ratios.
    val rows: List<Triple<String, String, () -> Long>> = listOf(
        Triple(fibJob, "Dispatchers.Default, async/await", onDispatcher(Dispatchers.Default) { fib(n, inline = false).toLong() }),
        Triple(fibJob, "ForkJoinPool dispatcher, async/await", onDispatcher(fjpDispatcher) { fib(n, inline = false).toLong() }),
        Triple(fibJob, "StealingDispatcher, async/await", onDispatcher(StealingDispatcher) { fib(n, inline = false).toLong() }),
        Triple(fibJob, "StealingDispatcher, awaitInline", onDispatcher(StealingDispatcher) { fib(n, inline = true).toLong() }),
        Triple(fibJob, "StealingDispatcher, forkJoin", onDispatcher(StealingDispatcher) { fibForkJoin(n).toLong() }),
        Triple(loopJob, "plain loop", { var s = 0L; for (i in 0 until size) s += i * i; s }),
        Triple(loopJob, "parallel stream in ForkJoinPool", { fjp.submit<Long> { LongStream.range(0, size).parallel().map { it * it }.sum() }.get() }),
        Triple(loopJob, "StealingDispatcher, parallelFold", {
            runBlocking { (0 until size.toInt()).parallelFold({ 0L }, { s, i -> s + i.toLong() * i }, Long::plus) }
        }),
    )
    val warmUp = 2
    val rounds = 5
    println("Stealing Dispatcher demo: ${roundsNote(warmUp, rounds)}")
    val times = rows.associate { it.second to ArrayList<Double>() }
    val progress = Progress(warmUp + rounds)
    repeat(warmUp + rounds) { round ->
        for ((job, name, run) in rows) {
            progress.show(round, "$job, $name")
            val start = System.nanoTime()
            val result = run()
            val ms = (System.nanoTime() - start) / 1e6
            val expected = if (job == fibJob) fibExpected.toLong() else sumExpected
            if (result != expected) fail("$job on $name: $result, expected $expected")
            if (round >= warmUp) times.getValue(name) += ms
        }
    }
    progress.done()
    fjp.shutdown()
    println("%-30s %-38s %10s %8s".format("job", "executor", "median", "ratio"))
    for ((job, jobRows) in rows.groupBy { it.first }) {
        val base = times.getValue(jobRows.first().second).medianOf()
        for ((_, name, _) in jobRows) {
            val m = times.getValue(name).medianOf()
            println("%-30s %-38s %7.1f ms %6.2f x".format(job, name, m, m / base))
        }
    }
    println("(ratios: time / the first row of the job; lower is better)")
}

/** fib(n) as a tree of coroutines: one `async` per node, no sequential cut-off. */
suspend fun fib(n: Int, inline: Boolean): Int = if (n < 2) n else coroutineScope {
    val left = async { fib(n - 1, inline) }
    val right = fib(n - 2, inline)
    (if (inline) left.awaitInline() else left.await()) + right
}

/** fib(n) with [forkJoin]: the second half is offered to idle workers, else runs here as a call. */
suspend fun fibForkJoin(n: Int): Int = if (n < 2) n else {
    val (a, b) = forkJoin({ fibForkJoin(n - 1) }, { fibForkJoin(n - 2) })
    a + b
}

private fun fibSequential(n: Int): Int = if (n < 2) n else fibSequential(n - 1) + fibSequential(n - 2)
