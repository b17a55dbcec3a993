package dev.stealing.benchmarks

import java.util.concurrent.CompletableFuture
import java.util.concurrent.Executor
import java.util.concurrent.ForkJoinPool
import java.util.concurrent.ForkJoinWorkerThread
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
 * The chain and the ping-pong are timed inside the pool, as [InPoolSubmit] is: from the start
 * of the task that completes the root (the first task on the pool) to the end of the last
 * stage's function, both stamped by the stages. The wake-up of a parked worker by the first
 * submission from outside, and the wake-up of the caller by the last stage, are not part of it:
 * on a loaded 2-core machine either can take hundreds of microseconds, as long as the 1,000
 * stages together, and decided which executor "won" a run
 * (docs/investigations/2026-12-02-completable-future-hand-offs.md). `allof` is timed from the
 * calling thread: its submissions from outside are what it measures.
 *
 * A note on `fjp-common`: on JDK 17, `CompletableFuture` does not use the common pool when its
 * parallelism is 1 (the default on a machine with 2 cores): it runs every async stage on a new
 * thread instead (`CompletableFuture.screenExecutor`); JDK 25 uses the pool, with its one
 * worker. The row measures what such a user gets; [commonPoolNote] says which it was.
 *
 * [run] returns the time of one run in microseconds and checks the result.
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

    /**
     * Whether `CompletableFuture` runs async stages given `ForkJoinPool.commonPool()` on that pool;
     * false when it starts a thread per stage instead (JDK 17 with a common pool of parallelism 1;
     * JDK 25 uses the pool whatever its parallelism). Found out once, by running one stage.
     */
    val commonPoolUsed: Boolean by lazy {
        CompletableFuture.supplyAsync({ Thread.currentThread() is ForkJoinWorkerThread }, ForkJoinPool.commonPool()).join()
    }

    val commonPoolNote: String
        get() = "fjp-common = `ForkJoinPool.commonPool()`, parallelism ${ForkJoinPool.getCommonPoolParallelism()}" +
            if (commonPoolUsed) "" else ", which `CompletableFuture` does not use on this JDK: it runs each async stage given it on a new thread"

    private val increment = Function<Int, Int> { it + 1 }

    /** When the first task on the pool started and the last stage ended ([System.nanoTime], stamped on the pool). */
    @Volatile private var started = 0L
    @Volatile private var ended = 0L

    /** The root's value, stamping the start of the run on the pool. */
    private val zero = Supplier { started = System.nanoTime(); 0 }

    /** The last stage of a chain: [increment], stamping the end. */
    private val lastIncrement = Function<Int, Int> { v -> (v + 1).also { ended = System.nanoTime() } }

    /** The in-pool time of the run just joined, in microseconds. */
    private fun inPool(): Double = (ended - started) / 1e3

    /** Runs [shape] once on [ex]; its time in microseconds (in the pool for `chain` and `pingpong`, from the caller for `allof`). */
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

    /** [CHAIN_STAGES] `thenApplyAsync` stages, built first, then started on the executor; in-pool time. */
    fun chain(ex: Executor, stages: Int = CHAIN_STAGES): Double {
        val root = CompletableFuture<Int>()
        var last: CompletableFuture<Int> = root
        for (i in 0 until stages) last = last.thenApplyAsync(if (i == stages - 1) lastIncrement else increment, ex)
        root.completeAsync(zero, ex)
        val r = last.await("chain of $stages")
        if (r != stages) throw WrongResult("chain of $stages stages returned $r")
        return inPool()
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
     * completion completes the round and submits the next ping. In-pool time: to the end of the
     * last pong's function.
     */
    fun pingPong(ex: Executor, rounds: Int = PINGPONG_ROUNDS): Double {
        val pong = Function<Int, CompletableFuture<Int>> { v ->
            CompletableFuture.supplyAsync({ (v + 1).also { if (it == rounds) ended = System.nanoTime() } }, ex)
        }
        val root = CompletableFuture<Int>()
        var last: CompletableFuture<Int> = root
        for (i in 0 until rounds) last = last.thenComposeAsync(pong, ex)
        root.completeAsync(zero, ex)
        val r = last.await("ping-pong of $rounds rounds")
        if (r != rounds) throw WrongResult("ping-pong of $rounds rounds returned $r")
        return inPool()
    }
}
