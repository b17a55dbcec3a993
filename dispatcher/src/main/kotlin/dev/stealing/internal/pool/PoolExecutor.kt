package dev.stealing.internal.pool

import dev.stealing.internal.join.InterruptibleCall
import dev.stealing.internal.join.JoinableTask
import dev.stealing.internal.jvm.ContextCapture
import dev.stealing.internal.timer.DelayedTask
import dev.stealing.internal.timer.MAX_DELAY_NANOS
import dev.stealing.internal.timer.PeriodicTasks
import dev.stealing.internal.timer.deadlineAfterNanos
import dev.stealing.internal.worker.Worker
import java.util.concurrent.AbstractExecutorService
import java.util.concurrent.Callable
import java.util.concurrent.Executors
import java.util.concurrent.Future
import java.util.concurrent.RejectedExecutionException
import java.util.concurrent.RunnableFuture
import java.util.concurrent.ScheduledFuture
import java.util.concurrent.TimeUnit

/**
 * The engine of the API's `StealingExecutorService` over one pool: what each of its methods does,
 * in the engine's types. The API's sealed interface delegates every method here and casts the
 * tasks back: they are made by [newTask], the API's `ForkedTask` constructor (a [JoinableTask]
 * that is also a [RunnableFuture]), which the engine does not know. `invokeAll` and `invokeAny`
 * are `AbstractExecutorService`'s, through [tasks], whose tasks are all made by [newTask].
 *
 * @property closeable false for the shared pool, whose `shutdown` methods throw.
 */
internal class PoolExecutor(
    private val pool: WorkStealingPool,
    private val closeable: Boolean,
    private val newTask: (Callable<*>) -> RunnableFuture<*>,
) {
    private val propagateContext = pool.config.propagateContext

    fun execute(command: Runnable) {
        // A forked task captured its context in its callable (newTaskFor/fork) and must stay the
        // queued object itself, or join() could not find it to run it inline.
        val task = if (propagateContext && command !is JoinableTask) ContextCapture.wrap(command) else command
        if (!pool.execute(task)) reject(command)
    }

    /** [callable] with the calling thread's context captured, if the pool propagates it: what a task calls. */
    private fun <T> captured(callable: Callable<T>): Callable<T> = pool.captured(callable)

    /** The task behind `submit`, `invokeAll` and `invokeAny`: `cancel(true)` interrupts it while it runs. */
    @Suppress("UNCHECKED_CAST")
    private fun <T> newInterruptible(callable: Callable<T>): RunnableFuture<T> =
        newTask(InterruptibleCall(captured(callable))) as RunnableFuture<T>

    @Suppress("UNCHECKED_CAST")
    private fun <T> newInterruptible(runnable: Runnable, value: T): RunnableFuture<T> =
        if (propagateContext) newInterruptible(Callable { runnable.run(); value }) else newTask(InterruptibleCall(runnable, value)) as RunnableFuture<T>

    fun <T> submit(task: Callable<T>): RunnableFuture<T> = newInterruptible(task).also { execute(it) }

    fun <T> submit(task: Runnable, result: T): RunnableFuture<T> = newInterruptible(task, result).also { execute(it) }

    /**
     * `AbstractExecutorService`'s `invokeAll` and `invokeAny` over this executor: it creates
     * every task with [newInterruptible] and queues them with [execute].
     */
    private val tasks = object : AbstractExecutorService() {
        override fun execute(command: Runnable) = this@PoolExecutor.execute(command)
        override fun <T> newTaskFor(callable: Callable<T>): RunnableFuture<T> = newInterruptible(callable)
        override fun <T> newTaskFor(runnable: Runnable, value: T): RunnableFuture<T> = newInterruptible(runnable, value)
        override fun shutdown() = this@PoolExecutor.shutdown()
        override fun shutdownNow(): List<Runnable> = this@PoolExecutor.shutdownNow()
        override fun isShutdown(): Boolean = this@PoolExecutor.isShutdown()
        override fun isTerminated(): Boolean = this@PoolExecutor.isTerminated()
        override fun awaitTermination(timeout: Long, unit: TimeUnit): Boolean = awaitTermination(unit.toNanos(timeout))
    }

    fun <T> invokeAll(tasks: Collection<Callable<T>>): List<Future<T>> = this.tasks.invokeAll(tasks)

    fun <T> invokeAll(tasks: Collection<Callable<T>>, timeout: Long, unit: TimeUnit): List<Future<T>> =
        this.tasks.invokeAll(tasks, timeout, unit)

    fun <T> invokeAny(tasks: Collection<Callable<T>>): T = this.tasks.invokeAny(tasks)

    fun <T> invokeAny(tasks: Collection<Callable<T>>, timeout: Long, unit: TimeUnit): T = this.tasks.invokeAny(tasks, timeout, unit)

    fun schedulePeriodic(command: Runnable, initialDelay: Long, period: Long, fixedRate: Boolean, unit: TimeUnit): ScheduledFuture<*> {
        require(period > 0) { "${if (fixedRate) "period" else "delay"} must be positive, was $period" }
        val nanos = unit.toNanos(period).coerceAtMost(MAX_DELAY_NANOS)
        return schedule(Executors.callable(command, null), initialDelay, if (fixedRate) nanos else -nanos, unit)
    }

    /**
     * A [DelayedTask] due after [delay]: queued at once if that is now, else into a worker's
     * timers. Refused after shutdown from any thread, a task of the pool too (as
     * `ScheduledThreadPoolExecutor`). A periodic task is registered first, so that `shutdown()`
     * finds it wherever it is ([PeriodicTasks]: the registration, then the run-state read here).
     */
    fun <V> schedule(callable: Callable<V>, delay: Long, period: Long, unit: TimeUnit): ScheduledFuture<V> {
        val delayNanos = unit.toNanos(delay)
        val task = DelayedTask(deadlineAfterNanos(delayNanos), captured(callable), period, pool.timers)
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

    private fun reject(command: Runnable): Nothing = throw pool.rejection(command)

    fun shutdown() {
        checkCloseable()
        pool.shutdown()
    }

    fun shutdownNow(): List<Runnable> {
        checkCloseable()
        return pool.stop()
    }

    fun isShutdown(): Boolean = pool.isShutdown()

    fun isTerminated(): Boolean = pool.isTerminated()

    fun awaitTermination(nanos: Long): Boolean = pool.awaitTermination(nanos)

    fun close() {
        checkCloseable()
        pool.close()
    }

    private fun checkCloseable() {
        if (!closeable) throw UnsupportedOperationException("The shared StealingDispatcher cannot be shut down")
    }

    override fun toString(): String = "StealingExecutorService[${pool.name}]"
}

/** The exception for [command], which this pool did not accept: it is shut down. */
internal fun WorkStealingPool.rejection(command: Runnable): RejectedExecutionException =
    RejectedExecutionException("${label()} is shut down; rejected $command")

/**
 * The pool of the calling worker, for `ForkedTask.fork`, or [IllegalStateException] on any
 * other thread.
 */
internal fun poolOfCallingWorker(): WorkStealingPool = (Thread.currentThread() as? Worker)?.pool as? WorkStealingPool
    ?: throw IllegalStateException(
        "ForkedTask.fork: the calling thread (${Thread.currentThread().name}) is not a worker of a StealingDispatcher; " +
            "fork onto a pool with pool.fork(task) (the shared pool: StealingDispatcher.getShared().fork(task), " +
            "in Kotlin StealingDispatcher.fork(task))",
    )

/** [callable] with the calling thread's context captured, if this pool propagates it: what a forked task calls. */
internal fun <T> WorkStealingPool.captured(callable: Callable<T>): Callable<T> =
    if (config.propagateContext) ContextCapture.wrap(callable) else callable

/** Forks [task] (its callable made by [captured]) onto this pool, or throws [RejectedExecutionException]. */
internal fun WorkStealingPool.forkOrReject(task: JoinableTask) {
    if (!fork(task)) throw rejection(task)
}
