package dev.stealing

import java.util.concurrent.AbstractExecutorService
import java.util.concurrent.Callable
import java.util.concurrent.RejectedExecutionException
import java.util.concurrent.TimeUnit

/**
 * The [java.util.concurrent.ExecutorService] face of a [StealingDispatcher], for Java users.
 * `submit` returns [ForkedTask]s (so `join()` inlines and helps); `execute` queues the
 * [Runnable] itself, allocating nothing. Tasks submitted from a worker of the pool go onto that
 * worker's deque; from anywhere else, onto the global queue.
 *
 * `shutdown()` stops intake and lets queued work finish; `shutdownNow()` also hands back the
 * tasks not yet started. A rejected task throws [RejectedExecutionException]; nothing accepted
 * is ever silently dropped. The executor of the shared [StealingDispatcher.Default] cannot be
 * shut down.
 */
internal class StealingExecutorService(
    private val pool: WorkStealingPool,
    private val closeable: Boolean,
) : AbstractExecutorService(), AutoCloseable {
    private val propagateContext = pool.options.propagateContext

    override fun execute(command: Runnable) {
        // A ForkedTask captured its context in its callable (newTaskFor/fork) and must stay the
        // queued object itself, or join() could not find it to run it inline.
        val task = if (propagateContext && command !is ForkedTask<*>) ContextCapture.wrap(command) else command
        if (!pool.execute(task)) reject(command)
    }

    /**
     * Forks [callable] as a [ForkedTask]: queued like [execute], joinable with inlining; never
     * interrupted by `cancel(true)` (as a `ForkJoinTask`).
     */
    fun <T> fork(callable: Callable<T>): ForkedTask<T> {
        val task = ForkedTask(if (propagateContext) ContextCapture.wrap(callable) else callable)
        if (!pool.fork(task)) reject(task)
        return task
    }

    /** The task behind `submit`, `invokeAll` and `invokeAny`: `cancel(true)` interrupts it while it runs. */
    override fun <T> newTaskFor(callable: Callable<T>): ForkedTask<T> =
        ForkedTask(InterruptibleCall(if (propagateContext) ContextCapture.wrap(callable) else callable))

    override fun <T> newTaskFor(runnable: Runnable, value: T): ForkedTask<T> =
        if (propagateContext) newTaskFor(Callable { runnable.run(); value }) else ForkedTask(InterruptibleCall(runnable, value))

    override fun <T> submit(task: Callable<T>): ForkedTask<T> = super.submit(task) as ForkedTask<T>

    override fun submit(task: Runnable): ForkedTask<*> = super.submit(task) as ForkedTask<*>

    override fun <T> submit(task: Runnable, result: T): ForkedTask<T> = super.submit(task, result) as ForkedTask<T>

    private fun reject(command: Runnable): Nothing {
        throw RejectedExecutionException("${pool.name} is shut down; rejected $command")
    }

    override fun shutdown() {
        checkCloseable()
        pool.shutdown()
    }

    override fun shutdownNow(): List<Runnable> {
        checkCloseable()
        return pool.stop()
    }

    override fun isShutdown(): Boolean = pool.isShutdown()

    override fun isTerminated(): Boolean = pool.isTerminated()

    /**
     * Waits until the pool has terminated or [timeout] passes; a zero or negative [timeout]
     * does not wait (it answers [isTerminated]).
     *
     * @throws IllegalStateException when called from a task of this pool, which would wait
     *   for itself.
     */
    override fun awaitTermination(timeout: Long, unit: TimeUnit): Boolean = pool.awaitTermination(unit.toNanos(timeout))

    /**
     * [shutdown], then waits until every accepted task has run and the worker threads have
     * finished, as `ExecutorService.close()` (JDK 19+) does. An interrupt while waiting does not
     * end the wait (and, unlike the JDK's default method, does not discard queued work: use
     * [shutdownNow] for that); it is re-asserted before this returns. Called from a task of this
     * pool, it cannot wait for itself: it stops intake and returns. Declared here, not inherited,
     * so it is also there on JDK 17, and it replaces the JDK 19+ default method.
     */
    override fun close() {
        checkCloseable()
        pool.shutdown()
        if (pool.currentWorker() == null) pool.joinAll()
    }

    private fun checkCloseable() {
        if (!closeable) throw UnsupportedOperationException("The shared StealingDispatcher.Default cannot be shut down")
    }

    override fun toString(): String = "StealingExecutorService[${pool.name}]"
}
