package dev.stealing.benchmarks.baselines

import java.util.concurrent.AbstractExecutorService
import java.util.concurrent.RejectedExecutionException
import java.util.concurrent.TimeUnit

/**
 * Baseline: the single-lock thread pool of Joe Duffy, "Building a custom thread pool
 * (series, part 1)" (2008), `SimpleLockThreadPool`, written in Kotlin for comparison only.
 *
 * Design, as in the article:
 * - one FIFO queue of work items, whose monitor (`synchronized` + `wait`/`notify`, the JVM's
 *   counterpart of the CLR `Monitor`) is the pool's only lock;
 * - a fixed number of threads, started lazily on the first submission (`ensureStarted`);
 * - a `threadsWaiting` counter so a submission pulses (notifies) one thread only if some thread
 *   is waiting; a worker that finds the queue empty waits on the monitor, no spinning.
 *
 * Deliberate differences from the article, none of which touches the queue/lock/parking path:
 * there is no ExecutionContext on the JVM (the article's "don't flow" variant is the one built);
 * a task that throws goes to the thread's uncaught-exception handler and the worker lives on
 * (the article lets it crash the thread, which would hang a benchmark); `shutdown()` lets queued
 * work finish (the article's `Dispose` drops it), as `ExecutorService` requires; threads are daemons.
 */
class LockPool(
    private val parallelism: Int = Runtime.getRuntime().availableProcessors(),
    private val name: String = "lock-pool",
) : AbstractExecutorService(), AutoCloseable {
    init {
        require(parallelism >= 1) { "parallelism must be >= 1, was $parallelism" }
    }

    /** The work items; its monitor guards every field below except [threads]. */
    private val queue = ArrayDeque<Runnable>()
    private var threadsWaiting = 0
    private var shutdown = false
    @Volatile private var threads: Array<Thread>? = null

    override fun execute(command: Runnable) {
        ensureStarted()
        synchronized(queue) {
            if (shutdown) throw RejectedExecutionException("$name is shut down")
            queue.addLast(command)
            if (threadsWaiting > 0) monitorOf(queue).notify()
        }
    }

    private fun ensureStarted() {
        if (threads != null) return
        synchronized(queue) {
            if (threads != null) return
            threads = Array(parallelism) { i ->
                Thread(::dispatchLoop, "$name-$i").apply { isDaemon = true; start() }
            }
        }
    }

    private fun dispatchLoop() {
        while (true) {
            val task: Runnable
            synchronized(queue) {
                while (queue.isEmpty()) {
                    if (shutdown) return
                    threadsWaiting++
                    try {
                        monitorOf(queue).wait()
                    } catch (_: InterruptedException) {
                        // shutdownNow(): re-check the queue and the shutdown flag
                    } finally {
                        threadsWaiting--
                    }
                }
                task = queue.removeFirst()
            }
            try {
                task.run()
            } catch (e: Throwable) {
                val t = Thread.currentThread()
                t.uncaughtExceptionHandler.uncaughtException(t, e)
            }
        }
    }

    override fun shutdown() {
        synchronized(queue) {
            shutdown = true
            monitorOf(queue).notifyAll()
        }
    }

    override fun shutdownNow(): List<Runnable> = synchronized(queue) {
        shutdown = true
        val left = queue.toList()
        queue.clear()
        monitorOf(queue).notifyAll()
        left
    }

    override fun isShutdown(): Boolean = synchronized(queue) { shutdown }

    override fun isTerminated(): Boolean = isShutdown && threads.orEmpty().none { it.isAlive }

    override fun awaitTermination(timeout: Long, unit: TimeUnit): Boolean {
        val deadline = System.nanoTime() + unit.toNanos(timeout)
        for (t in threads.orEmpty()) {
            val left = deadline - System.nanoTime()
            if (left <= 0) return isTerminated
            TimeUnit.NANOSECONDS.timedJoin(t, left)
        }
        return isTerminated
    }

    /** Shuts down and waits for the threads, like the article's synchronous `Dispose`. */
    override fun close() {
        shutdown()
        for (t in threads.orEmpty()) if (t !== Thread.currentThread()) t.join()
    }

    override fun toString(): String = "LockPool[$name, parallelism = $parallelism]"

    private fun Array<Thread>?.orEmpty(): Array<Thread> = this ?: emptyArray()
}
