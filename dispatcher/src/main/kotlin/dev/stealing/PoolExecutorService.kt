package dev.stealing

import dev.stealing.internal.join.InterruptibleCall
import dev.stealing.internal.jvm.ContextCapture
import dev.stealing.internal.pool.WorkStealingPool
import dev.stealing.internal.timer.DelayedTask
import dev.stealing.internal.timer.MAX_DELAY_NANOS
import dev.stealing.internal.timer.deadlineAfterNanos
import java.util.concurrent.AbstractExecutorService
import java.util.concurrent.Callable
import java.util.concurrent.Executors
import java.util.concurrent.RejectedExecutionException
import java.util.concurrent.ScheduledFuture
import java.util.concurrent.TimeUnit

/** The implementation of [StealingExecutorService] over one pool. */
internal class PoolExecutorService(
    private val pool: WorkStealingPool,
    private val closeable: Boolean,
) : AbstractExecutorService(), StealingExecutorService {
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

    override fun <T> submit(task: Callable<T>): ForkedTask<T> = super<AbstractExecutorService>.submit(task) as ForkedTask<T>

    override fun submit(task: Runnable): ForkedTask<*> = super<AbstractExecutorService>.submit(task) as ForkedTask<*>

    override fun <T> submit(task: Runnable, result: T): ForkedTask<T> = super<AbstractExecutorService>.submit(task, result) as ForkedTask<T>

    // AbstractExecutorService creates every task with newTaskFor: they are all ForkedTasks.
    @Suppress("UNCHECKED_CAST")
    override fun <T> invokeAll(tasks: Collection<Callable<T>>): List<ForkedTask<T>> =
        super<AbstractExecutorService>.invokeAll(tasks) as List<ForkedTask<T>>

    @Suppress("UNCHECKED_CAST")
    override fun <T> invokeAll(tasks: Collection<Callable<T>>, timeout: Long, unit: TimeUnit): List<ForkedTask<T>> =
        super<AbstractExecutorService>.invokeAll(tasks, timeout, unit) as List<ForkedTask<T>>

    override fun schedule(command: Runnable, delay: Long, unit: TimeUnit): ScheduledFuture<*> =
        scheduleTask(Executors.callable(command, null), delay, 0L, unit)

    override fun <V> schedule(callable: Callable<V>, delay: Long, unit: TimeUnit): ScheduledFuture<V> =
        scheduleTask(callable, delay, 0L, unit)

    override fun scheduleAtFixedRate(command: Runnable, initialDelay: Long, period: Long, unit: TimeUnit): ScheduledFuture<*> {
        require(period > 0) { "period must be positive, was $period" }
        return scheduleTask(Executors.callable(command, null), initialDelay, unit.toNanos(period).coerceAtMost(MAX_DELAY_NANOS), unit)
    }

    override fun scheduleWithFixedDelay(command: Runnable, initialDelay: Long, delay: Long, unit: TimeUnit): ScheduledFuture<*> {
        require(delay > 0) { "delay must be positive, was $delay" }
        return scheduleTask(Executors.callable(command, null), initialDelay, -unit.toNanos(delay).coerceAtMost(MAX_DELAY_NANOS), unit)
    }

    /**
     * A [DelayedTask] due after [delay]: queued at once if that is now, else into a worker's
     * timers. Refused after shutdown from any thread, a task of the pool too (as
     * `ScheduledThreadPoolExecutor`). A periodic task is registered first, so that `shutdown()`
     * finds it wherever it is ([PeriodicTasks]: the registration, then the run-state read here).
     */
    private fun <V> scheduleTask(callable: Callable<V>, delay: Long, period: Long, unit: TimeUnit): ScheduledFuture<V> {
        val delayNanos = unit.toNanos(delay)
        val task = DelayedTask(deadlineAfterNanos(delayNanos), if (propagateContext) ContextCapture.wrap(callable) else callable, period, pool.timers)
        if (period != 0L) pool.timers.periodicTasks.register(task)
        val accepted = try {
            when {
                pool.isShutdown() -> false
                delayNanos <= 0L -> pool.execute(task) || refuse(task) // execute() counted it
                else -> pool.timers.addTimer(task)
            }
        } catch (e: Throwable) { // not accepted (a StackOverflowError while offering, say)
            pool.timers.periodicTasks.remove(task)
            throw e
        }
        if (!accepted) {
            pool.rejected.increment()
            refuse(task)
        }
        return task
    }

    /** [task] was not accepted: it leaves the live periodic tasks, and its scheduler gets the exception. */
    private fun refuse(task: DelayedTask<*>): Nothing {
        pool.timers.periodicTasks.remove(task)
        reject(task)
    }

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

    override fun awaitTermination(timeout: Long, unit: TimeUnit): Boolean = pool.awaitTermination(unit.toNanos(timeout))

    // Declared, not inherited, so it is there on JDK 17 too and replaces the JDK 19+ default method.
    override fun close() {
        checkCloseable()
        pool.shutdown()
        if (pool.currentWorker() == null) pool.joinAll()
    }

    private fun checkCloseable() {
        if (!closeable) throw UnsupportedOperationException("The shared StealingDispatcher cannot be shut down")
    }

    override fun toString(): String = "StealingExecutorService[${pool.name}]"
}
