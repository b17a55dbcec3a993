package dev.stealing.benchmarks

import java.util.concurrent.CompletableFuture
import java.util.concurrent.Executor
import java.util.concurrent.ForkJoinPool
import java.util.concurrent.TimeUnit
import java.util.function.Function
import java.util.function.Supplier

/**
 * The ways Java code composes asynchronous work: `CompletableFuture.*Async(.., executor)`
 * stages, run on an [ExecutorUnderTest]'s `Executor` (ours: `StealingDispatcher.executor`;
 * `fjp`: `ForkJoinPool(parallelism)`; `fjp-common`: `ForkJoinPool.commonPool()`; `tpe`:
 * `Executors.newFixedThreadPool(parallelism)`). Every stage does almost nothing (an add), so
 * what differs between executors is the hand-off from one stage to the next.
 *
 * | shape | what |
 * |---|---|
 * | `chain` | [CHAIN_STAGES] `thenApplyAsync(+1)` stages built on an incomplete future, then started with `completeAsync` on the executor: from there on each stage is submitted by the worker that completed the one before it |
 * | `allof` | [ALLOF_TASKS] `supplyAsync` submitted from the calling thread (outside the pool), joined by `allOf` |
 * | `pingpong` | [PINGPONG_ROUNDS] rounds built on an incomplete future, each a `thenComposeAsync` stage (ping) that hands its value to a `supplyAsync` (pong) which returns it plus one; the pong's completion starts the next ping: two hand-offs per round, each submitted from inside the pool |
 *
 * A note on `fjp-common`: `CompletableFuture` does not use the common pool when its parallelism
 * is 1 (the default on a machine with 2 cores): it runs every async stage on a new thread
 * instead (`CompletableFuture.screenExecutor`). That row then measures what such a user gets;
 * [commonPoolNote] says which it was.
 *
 * [run] returns the time of one run in microseconds, from the first submission to the joined
 * result, and checks the result.
 */
object CompletableFutureShapes {
    val ALL = listOf("chain", "allof", "pingpong")

    /** The executors every shape runs on: ours and its three peers. */
    val EXECUTORS = listOf("stealing", "fjp", "fjp-common", "tpe")

    /** The peers of `stealing`. */
    val PEERS = EXECUTORS - "stealing"

    const val CHAIN_STAGES = 1_000
    const val ALLOF_TASKS = 10_000
    const val PINGPONG_ROUNDS = 1_000

    /** Whether `CompletableFuture` runs async stages given `ForkJoinPool.commonPool()` on that pool (else on a thread each). */
    val commonPoolUsed: Boolean get() = ForkJoinPool.getCommonPoolParallelism() > 1

    val commonPoolNote: String
        get() = "fjp-common = `ForkJoinPool.commonPool()`, parallelism ${ForkJoinPool.getCommonPoolParallelism()}" +
            if (commonPoolUsed) "" else " (so `CompletableFuture` runs each async stage given it on a new thread instead)"

    private val increment = Function<Int, Int> { it + 1 }
    private val zero = Supplier { 0 }

    /** Runs [shape] once on [ex]; microseconds from the first submission to the checked result. */
    fun run(shape: String, ex: ExecutorUnderTest): Double = run(shape, ex.executor)

    fun run(shape: String, ex: Executor): Double = when (shape) {
        "chain" -> chain(ex)
        "allof" -> allOf(ex)
        "pingpong" -> pingPong(ex)
        else -> throw IllegalArgumentException("shape must be one of $ALL, was '$shape'")
    }

    private fun <T> CompletableFuture<T>.await(what: String): T = try {
        get(WAIT_LIMIT_SECONDS, TimeUnit.SECONDS)
    } catch (e: java.util.concurrent.TimeoutException) {
        throw WrongResult("$what: no result within $WAIT_LIMIT_SECONDS s")
    }

    private fun micros(t0: Long) = (System.nanoTime() - t0) / 1e3

    /** [CHAIN_STAGES] `thenApplyAsync` stages, built first, then started on the executor. */
    fun chain(ex: Executor, stages: Int = CHAIN_STAGES): Double {
        val root = CompletableFuture<Int>()
        var last: CompletableFuture<Int> = root
        for (i in 0 until stages) last = last.thenApplyAsync(increment, ex)
        val t0 = System.nanoTime()
        root.completeAsync(zero, ex)
        val r = last.await("chain of $stages")
        val t = micros(t0)
        if (r != stages) throw WrongResult("chain of $stages stages returned $r")
        return t
    }

    /** [ALLOF_TASKS] `supplyAsync` from the calling thread, joined by `allOf`. */
    fun allOf(ex: Executor, tasks: Int = ALLOF_TASKS): Double {
        val t0 = System.nanoTime()
        val futures = arrayOfNulls<CompletableFuture<Int>>(tasks)
        for (i in 0 until tasks) {
            val v = i
            futures[i] = CompletableFuture.supplyAsync({ v }, ex)
        }
        CompletableFuture.allOf(*futures).await("allOf of $tasks")
        val t = micros(t0)
        var sum = 0L
        for (f in futures) sum += f!!.getNow(-1)
        val expected = tasks.toLong() * (tasks - 1) / 2
        if (sum != expected) throw WrongResult("allOf of $tasks: sum $sum, expected $expected")
        return t
    }

    /**
     * [PINGPONG_ROUNDS] rounds, built first: each `thenComposeAsync` stage (ping) returns a
     * `supplyAsync` (pong) of its value plus one, submitted from the ping's worker; the pong's
     * completion completes the round and submits the next ping.
     */
    fun pingPong(ex: Executor, rounds: Int = PINGPONG_ROUNDS): Double {
        val pong = Function<Int, CompletableFuture<Int>> { v -> CompletableFuture.supplyAsync({ v + 1 }, ex) }
        val root = CompletableFuture<Int>()
        var last: CompletableFuture<Int> = root
        for (i in 0 until rounds) last = last.thenComposeAsync(pong, ex)
        val t0 = System.nanoTime()
        root.completeAsync(zero, ex)
        val r = last.await("ping-pong of $rounds rounds")
        val t = micros(t0)
        if (r != rounds) throw WrongResult("ping-pong of $rounds rounds returned $r")
        return t
    }
}
