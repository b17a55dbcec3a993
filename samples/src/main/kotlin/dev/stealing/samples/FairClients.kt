package dev.stealing.samples

import dev.stealing.FairQueueDispatcher
import dev.stealing.StealingDispatcher
import java.util.concurrent.CountDownLatch
import java.util.concurrent.Executor
import java.util.concurrent.atomic.AtomicInteger
import java.util.concurrent.atomic.AtomicIntegerArray
import kotlin.math.roundToInt

/**
 * Two clients sharing one pool: client "big" submits a batch of 200,000 short tasks (a few
 * microseconds of busy work each) and, once its batch is queued and has started running,
 * client "small" submits 2,000. Each client submits from its own thread. The program runs this
 * twice: first both clients through the pool's plain executor (one FIFO queue, so the small
 * batch waits behind all of the big one), then each client through its own
 * `pool.fairQueue(name)` (the workers serve the two queues round-robin, so the small batch gets
 * half of the pool at once). While it runs it samples every 20 ms how many tasks of each client
 * have completed and prints that as a text chart, one line per sample (thinned to about 25
 * lines, keeping every sample in which "small" moved), and at the end when
 * "small" finished relative to "big" in each mode. Checks that every task ran exactly once (and,
 * in the fair mode, that each fair queue counted exactly its client's tasks).
 *
 * Run: `mvn -q -pl samples -am compile exec:java -Dexec.mainClass=dev.stealing.samples.FairClientsKt`
 */
fun main() {
    val bigTasks = 200_000
    val smallTasks = 2_000
    val parallelism = Runtime.getRuntime().availableProcessors()
    val taskMicros = warmUpBusyWork()
    println("two clients on one pool of %d workers: \"big\" submits %,d tasks, then \"small\" submits %,d; %d iterations of busy work per task (%.1f µs each when timed on the main thread)"
        .format(parallelism, bigTasks, smallTasks, WORK_ITERATIONS, taskMicros))

    val pool = StealingDispatcher(parallelism, "fair-clients")
    val results = ArrayList<ClientsRun>()
    try {
        warmUpPool(pool)
        println()
        println("1. FIFO: both clients through pool.executor")
        results += runClients("FIFO", bigTasks, smallTasks, pool.executor, pool.executor).also { it.print() }

        println()
        println("2. fair: each client through its own pool.fairQueue(name)")
        val bigQueue = pool.fairQueue("big")
        val smallQueue = pool.fairQueue("small")
        results += runClients("fair", bigTasks, smallTasks, bigQueue.executor, smallQueue.executor).also { it.print() }
        checkFairQueueCounts(pool, mapOf(bigQueue to bigTasks, smallQueue to smallTasks))
        bigQueue.close()
        smallQueue.close()
    } finally {
        pool.close()
    }

    println()
    println("when \"small\" finished (ms after \"big\" started submitting):")
    for (r in results) {
        val gap = r.big.finishedMs - r.small.finishedMs
        println("  %-5s small submitted at %5.0f, done at %5.0f (after %5.0f ms); big done at %5.0f: small finished %4.0f ms %s big, at %3.0f%% of big's run"
            .format(r.mode, r.small.submittedMs, r.small.finishedMs, r.small.latencyMs, r.big.finishedMs,
                kotlin.math.abs(gap), if (gap >= 0) "before" else "after", 100 * r.small.finishedMs / r.big.finishedMs))
    }
    val (fifo, fair) = results
    println("  small's batch took: FIFO %.0f ms, fair %.0f ms (%.0f x sooner); big's run: FIFO %.0f ms, fair %.0f ms"
        .format(fifo.small.latencyMs, fair.small.latencyMs, fifo.small.latencyMs / fair.small.latencyMs,
            fifo.big.finishedMs, fair.big.finishedMs))
    println("checked: every one of the %,d tasks ran exactly once in both modes".format(bigTasks + smallTasks))
}

/** Busy-work iterations per task: a chain of dependent SplitMix64 rounds, a few microseconds. */
private const val WORK_ITERATIONS = 500

/** Interval between two samples of the chart. */
private const val SAMPLE_MS = 20L

/** About how many lines a chart shows at most (plus the samples in which "small" moved). */
private const val MAX_CHART_LINES = 25

/** The busy work of task [i]: [WORK_ITERATIONS] dependent hash rounds. */
private fun busyWork(i: Int): Long {
    var h = i.toLong()
    repeat(WORK_ITERATIONS) { h = splitMix64(h) }
    return h
}

/** Compiles [busyWork] before anything is timed and returns its duration in µs on this thread. */
private fun warmUpBusyWork(): Double {
    var sink = 0L
    repeat(30_000) { sink += busyWork(it) }
    val n = 20_000
    val start = System.nanoTime()
    repeat(n) { sink += busyWork(it) }
    val micros = (System.nanoTime() - start) / 1e3 / n
    if (sink == 42L) println() // keeps the loop from being optimized away
    return micros
}

/** Runs a few batches through the pool's executor and a fair queue, so the timed runs start with compiled code. */
private fun warmUpPool(pool: StealingDispatcher) {
    val queue = pool.fairQueue("warm-up")
    repeat(3) {
        for (executor in listOf(pool.executor, queue.executor)) {
            val client = ClientBatch("warm-up", 20_000, System.nanoTime())
            client.submitAll(executor)
            while (client.completed.get() != client.size) Thread.sleep(1)
            client.check()?.let { fail("warm-up: $it") }
        }
    }
    queue.close()
}

/** One client's batch: its tasks, what ran, and when. */
private class ClientBatch(val name: String, val size: Int, private val t0: Long) {
    /** How often each task ran: each must end at exactly 1. */
    val runs = AtomicIntegerArray(size)
    private val results = LongArray(size)
    val completed = AtomicInteger()
    @Volatile var submittedNanos = 0L
    @Volatile var queuedNanos = 0L
    @Volatile var finishedNanos = 0L

    fun task(i: Int) = Runnable {
        results[i] = busyWork(i)
        runs.incrementAndGet(i)
        if (completed.incrementAndGet() == size) finishedNanos = System.nanoTime()
    }

    /** Submits the whole batch through [executor] from the calling thread. */
    fun submitAll(executor: Executor) {
        submittedNanos = System.nanoTime()
        for (i in 0 until size) executor.execute(task(i))
        queuedNanos = System.nanoTime()
    }

    /** Null if every task ran exactly once, else what is wrong. */
    fun check(): String? {
        for (i in 0 until size) {
            val n = runs.get(i)
            if (n != 1) return "client $name: task $i ran $n times"
        }
        return if (completed.get() != size) "client $name: ${completed.get()} completions for $size tasks" else null
    }

    fun timing() = ClientTiming((submittedNanos - t0) / 1e6, (queuedNanos - t0) / 1e6, (finishedNanos - t0) / 1e6)
}

/** Milliseconds since "big" started: when the client started submitting, had queued its whole batch, saw its last task complete. */
private class ClientTiming(val submittedMs: Double, val queuedMs: Double, val finishedMs: Double) {
    val latencyMs: Double get() = finishedMs - submittedMs
}

/** A chart sample: ms since "big" started submitting, tasks completed by each client. */
private class ProgressSample(val ms: Double, val big: Int, val small: Int)

private class ClientsRun(
    val mode: String,
    val bigSize: Int,
    val smallSize: Int,
    val samples: List<ProgressSample>,
    val big: ClientTiming,
    val small: ClientTiming,
) {
    /**
     * The chart: a bar per client (the part of its own batch completed) for every [every]-th
     * sample, every sample in which "small" moved, and the last one, so it stays short.
     */
    fun print() {
        val every = (samples.size + MAX_CHART_LINES - 1) / MAX_CHART_LINES
        println("      ms  big (%,d tasks)                      small (%,d tasks)      (%d samples every %d ms%s)"
            .format(bigSize, smallSize, samples.size, SAMPLE_MS,
                if (every > 1) "; shown: one in $every, and each where small moved" else ""))
        for ((j, s) in samples.withIndex()) {
            val smallMoved = j > 0 && s.small != samples[j - 1].small
            if (j % every != 0 && j != samples.lastIndex && !smallMoved) continue
            println("  %6.0f  %s %3d%%   %s %3d%%".format(s.ms, bar(s.big, bigSize), percent(s.big, bigSize),
                bar(s.small, smallSize), percent(s.small, smallSize)))
        }
        println("  big: submitting 0-%.0f ms, done at %.0f ms;  small: submitting %.0f-%.0f ms, done at %.0f ms"
            .format(big.queuedMs, big.finishedMs, small.submittedMs, small.queuedMs, small.finishedMs))
    }

    private fun percent(done: Int, total: Int) = (100.0 * done / total).toInt()

    private fun bar(done: Int, total: Int): String {
        val width = 30
        val full = (width.toDouble() * done / total).roundToInt()
        return "|" + "#".repeat(full) + ".".repeat(width - full) + "|"
    }
}

/**
 * One run: "big" submits its batch through [bigExecutor] from its own thread; "small" waits
 * until that batch is queued and its first task has completed, then submits through
 * [smallExecutor] from another thread. The calling thread samples progress every [SAMPLE_MS].
 */
private fun runClients(mode: String, bigSize: Int, smallSize: Int, bigExecutor: Executor, smallExecutor: Executor): ClientsRun {
    val t0 = System.nanoTime()
    val big = ClientBatch("big", bigSize, t0)
    val small = ClientBatch("small", smallSize, t0)
    val bigQueued = CountDownLatch(1)
    val bigThread = Thread({ big.submitAll(bigExecutor); bigQueued.countDown() }, "client-big")
    val smallThread = Thread({
        bigQueued.await()
        while (big.completed.get() == 0) Thread.sleep(1)
        small.submitAll(smallExecutor)
    }, "client-small")
    bigThread.start()
    smallThread.start()

    val samples = ArrayList<ProgressSample>()
    val deadline = t0 + 60_000_000_000L
    while (true) {
        Thread.sleep(SAMPLE_MS)
        val now = System.nanoTime()
        val b = big.completed.get()
        val s = small.completed.get()
        samples += ProgressSample((now - t0) / 1e6, b, s)
        if (b == bigSize && s == smallSize) break
        if (now > deadline) fail("$mode: not done after 60 s (big $b of $bigSize, small $s of $smallSize)")
    }
    bigThread.join()
    smallThread.join()
    // The last task of a batch stamps the finish time just after counting itself.
    while (big.finishedNanos == 0L || small.finishedNanos == 0L) Thread.onSpinWait()
    big.check()?.let { fail("$mode: $it") }
    small.check()?.let { fail("$mode: $it") }
    return ClientsRun(mode, bigSize, smallSize, samples, big.timing(), small.timing())
}

/** Each fair queue must have handed out exactly its client's tasks (the pool's own count). */
private fun checkFairQueueCounts(pool: StealingDispatcher, expected: Map<FairQueueDispatcher, Int>) {
    val stats = pool.stats().fairQueues.associateBy { it.name }
    for ((queue, n) in expected) {
        val s = stats[queue.name] ?: fail("fair queue ${queue.name} missing from the pool's stats")
        if (s.executed != n.toLong() || s.depth != 0) fail("fair queue ${queue.name}: executed ${s.executed}, depth ${s.depth}, expected $n and 0")
    }
    println("  pool stats: " + expected.keys.joinToString { q -> "${q.name} executed ${stats.getValue(q.name).executed}" })
}
