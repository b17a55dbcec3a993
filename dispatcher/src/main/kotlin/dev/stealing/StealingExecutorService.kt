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
) : AbstractExecutorService() {
    private val propagateContext = pool.options.propagateContext

    override fun execute(command: Runnable) {
        // A ForkedTask captured its context in its callable (newTaskFor/fork) and must stay the
        // queued object itself, or join() could not find it to run it inline.
        val task = if (propagateContext && command !is ForkedTask<*>) ContextCapture.wrap(command) else command
        if (!pool.execute(task)) reject(command)
    }

    /** Forks [callable] as a [ForkedTask]: queued like [execute], joinable with inlining. */
    fun <T> fork(callable: Callable<T>): ForkedTask<T> {
        val task = newTaskFor(callable)
        if (!pool.fork(task)) reject(task)
        return task
    }

    override fun <T> newTaskFor(callable: Callable<T>): ForkedTask<T> =
        ForkedTask(if (propagateContext) ContextCapture.wrap(callable) else callable)

    override fun <T> newTaskFor(runnable: Runnable, value: T): ForkedTask<T> =
        newTaskFor(Callable { runnable.run(); value })

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

    override fun awaitTermination(timeout: Long, unit: TimeUnit): Boolean {
        require(timeout >= 0) { "timeout must be >= 0, was $timeout" }
        return pool.awaitTermination(unit.toNanos(timeout))
    }

    private fun checkCloseable() {
        if (!closeable) throw UnsupportedOperationException("The shared StealingDispatcher.Default cannot be shut down")
    }

    override fun toString(): String = "StealingExecutorService[${pool.name}]"
}
