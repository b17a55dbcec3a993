package dev.stealing

import dev.stealing.internal.join.InterruptibleCall
import dev.stealing.internal.jvm.ContextCapture
import dev.stealing.internal.pool.WorkStealingPool
import dev.stealing.internal.pool.label
import dev.stealing.internal.timer.DelayedTask
import dev.stealing.internal.timer.MAX_DELAY_NANOS
import dev.stealing.internal.timer.deadlineAfterNanos
import dev.stealing.internal.worker.Worker
import java.util.concurrent.AbstractExecutorService
import java.util.concurrent.Callable
import java.util.concurrent.Executors
import java.util.concurrent.RejectedExecutionException
import java.util.concurrent.ScheduledFuture
import java.util.concurrent.TimeUnit

/**
 * The implementation of [StealingExecutorService] over one pool. The methods that take an
 * argument are implemented by the interface (so that Kotlin's null checks name it, not this
 * class) and call the `...Task` methods here; `invokeAll` and `invokeAny` are
 * `AbstractExecutorService`'s, through [tasks], whose tasks are all [ForkedTask]s.
 */
internal class PoolExecutorService(
    private val pool: WorkStealingPool,
    private val closeable: Boolean,
) : StealingExecutorService {
    private val propagateContext = pool.config.propagateContext

    fun executeTask(command: Runnable) {
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
    private fun <T> newTask(callable: Callable<T>): ForkedTask<T> =
        ForkedTask(InterruptibleCall(if (propagateContext) ContextCapture.wrap(callable) else callable))

    private fun <T> newTask(runnable: Runnable, value: T): ForkedTask<T> =
        if (propagateContext) newTask(Callable { runnable.run(); value }) else ForkedTask(InterruptibleCall(runnable, value))

    fun <T> submitTask(task: Callable<T>): ForkedTask<T> = newTask(task).also { executeTask(it) }

    fun <T> submitTask(task: Runnable, result: T): ForkedTask<T> = newTask(task, result).also { executeTask(it) }

    /**
     * `AbstractExecutorService`'s `invokeAll` and `invokeAny` over this executor: it creates
     * every task with [newTask] (so they are [ForkedTask]s) and queues them with [executeTask].
     */
    private val tasks = object : AbstractExecutorService() {
        override fun execute(command: Runnable) = executeTask(command)
        override fun <T> newTaskFor(callable: Callable<T>): ForkedTask<T> = newTask(callable)
        override fun <T> newTaskFor(runnable: Runnable, value: T): ForkedTask<T> = newTask(runnable, value)
        override fun shutdown() = this@PoolExecutorService.shutdown()
        override fun shutdownNow(): List<Runnable> = this@PoolExecutorService.shutdownNow()
        override fun isShutdown(): Boolean = this@PoolExecutorService.isShutdown
        override fun isTerminated(): Boolean = this@PoolExecutorService.isTerminated
        override fun awaitTermination(timeout: Long, unit: TimeUnit): Boolean = awaitTerminationNanos(unit.toNanos(timeout))
    }

    @Suppress("UNCHECKED_CAST")
    fun <T> invokeAllTasks(tasks: Collection<Callable<T>>): List<ForkedTask<T>> =
        this.tasks.invokeAll(tasks) as List<ForkedTask<T>>

    @Suppress("UNCHECKED_CAST")
    fun <T> invokeAllTasks(tasks: Collection<Callable<T>>, timeout: Long, unit: TimeUnit): List<ForkedTask<T>> =
        this.tasks.invokeAll(tasks, timeout, unit) as List<ForkedTask<T>>

    fun <T> invokeAnyTask(tasks: Collection<Callable<T>>): T = this.tasks.invokeAny(tasks)

    fun <T> invokeAnyTask(tasks: Collection<Callable<T>>, timeout: Long, unit: TimeUnit): T =
        this.tasks.invokeAny(tasks, timeout, unit)

    fun schedulePeriodic(command: Runnable, initialDelay: Long, period: Long, fixedRate: Boolean, unit: TimeUnit): ScheduledFuture<*> {
        require(period > 0) { "${if (fixedRate) "period" else "delay"} must be positive, was $period" }
        val nanos = unit.toNanos(period).coerceAtMost(MAX_DELAY_NANOS)
        return scheduleTask(Executors.callable(command, null), initialDelay, if (fixedRate) nanos else -nanos, unit)
    }

    /**
     * A [DelayedTask] due after [delay]: queued at once if that is now, else into a worker's
     * timers. Refused after shutdown from any thread, a task of the pool too (as
     * `ScheduledThreadPoolExecutor`). A periodic task is registered first, so that `shutdown()`
     * finds it wherever it is ([PeriodicTasks]: the registration, then the run-state read here).
     */
    fun <V> scheduleTask(callable: Callable<V>, delay: Long, period: Long, unit: TimeUnit): ScheduledFuture<V> {
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
        throw RejectedExecutionException("${pool.label()} is shut down; rejected $command")
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

    fun awaitTerminationNanos(nanos: Long): Boolean = pool.awaitTermination(nanos)

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

/**
 * [ForkedTask.fork]: [StealingDispatcher.fork] onto the pool of the calling worker (context
 * captured and rejection as there), or [IllegalStateException] on any other thread.
 */
internal fun <T> forkOnCurrentWorker(callable: Callable<T>): ForkedTask<T> {
    val pool = (Thread.currentThread() as? Worker)?.pool as? WorkStealingPool ?: throw IllegalStateException(
        "ForkedTask.fork: the calling thread (${Thread.currentThread().name}) is not a worker of a StealingDispatcher; " +
            "fork onto a pool with pool.fork(task) (the shared pool: StealingDispatcher.getShared().fork(task), " +
            "in Kotlin StealingDispatcher.fork(task))",
    )
    val task = ForkedTask(if (pool.config.propagateContext) ContextCapture.wrap(callable) else callable)
    if (!pool.fork(task)) throw RejectedExecutionException("${pool.label()} is shut down; rejected $task")
    return task
}
