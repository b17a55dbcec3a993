package dev.stealing

import dev.stealing.internal.pool.PoolExecutor
import java.util.concurrent.Callable
import java.util.concurrent.ExecutorService
import java.util.concurrent.Executors
import java.util.concurrent.RejectedExecutionException
import java.util.concurrent.ScheduledExecutorService
import java.util.concurrent.ScheduledFuture
import java.util.concurrent.TimeUnit

/**
 * The [ExecutorService] face of a [StealingDispatcher] ([StealingDispatcher.executor]): every
 * method that creates tasks returns them as [ForkedTask]s, so [ForkedTask.join] (which runs a
 * task inline or helps the worker that took it) needs no cast, from Kotlin or Java:
 *
 * ```kotlin
 * val answer = pool.executor.submit<Int> { 42 }.join()
 * ```
 * ```java
 * int answer = pool.getExecutor().submit(() -> 42).join();
 * ```
 *
 * In Kotlin, as with any `ExecutorService`, a bare lambda (`submit { 42 }`) is taken as a
 * [Runnable] and its task completes with null: give the type (`submit<Int> { 42 }`), write
 * `submit(Callable { 42 })`, or use [StealingDispatcher.fork].
 *
 * `execute` queues the [Runnable] itself, allocating nothing. Tasks submitted from a worker of
 * the pool go onto that worker's deque; from anywhere else, onto the global queue.
 *
 * It is a [ScheduledExecutorService] too: [schedule], [scheduleAtFixedRate] and
 * [scheduleWithFixedDelay] keep their timers on the pool's workers (no timer thread), with
 * `ScheduledThreadPoolExecutor`'s semantics: a zero or negative delay means now; cancelling a
 * delayed task removes it at once; a periodic task that throws runs no more (its future holds
 * the exception); runs of one periodic task never overlap.
 *
 * `shutdown()` stops intake and lets queued work finish; delayed one-shot tasks still run at
 * their time and the pool terminates after them, while every periodic task that waits is
 * cancelled at once, even one whose run is already due, and one whose run is under way ends that
 * run, then is cancelled instead of scheduled again: its future is not done until the run ends
 * (the default policies of `ScheduledThreadPoolExecutor`).
 * `shutdownNow()` also hands back the tasks not yet started, whichever way they were queued
 * (through this executor, [StealingDispatcher.affinityExecutor] or a fair queue), delayed and
 * periodic ones included: as `ScheduledThreadPoolExecutor`, it does not cancel those (nor does a
 * later `shutdown()` or `close()`), so a caller waiting on one waits until somebody runs or
 * cancels it; unlike there, running a handed-back task runs it (a periodic one runs once, then
 * its future is cancelled). Tasks created by `submit`/`fork` are handed back cancelled, so that
 * joins end, as `ForkJoinPool` does. A rejected task throws [RejectedExecutionException];
 * nothing accepted is ever silently dropped.
 * The executor of the shared pool ([StealingDispatcher.shared]) cannot be shut down: those
 * methods throw [UnsupportedOperationException].
 *
 * A null argument (from Java) throws [NullPointerException] naming this interface, the method
 * and the parameter, for example `Parameter specified as non-null is null: method
 * dev.stealing.StealingExecutorService.submit, parameter task`.
 *
 * Only this library implements this interface.
 */
@Suppress("UNCHECKED_CAST")
public sealed interface StealingExecutorService : ScheduledExecutorService, AutoCloseable {
    // Every method that takes an argument is implemented here, so that Kotlin's null check of
    // that argument, which runs first, names this public interface, not the implementation;
    // each delegates to the engine's PoolExecutor, which makes the tasks as ForkedTasks.

    /** The engine behind the one implementation (the interface is sealed). */
    private val engine: PoolExecutor get() = (this as PoolExecutorFace).engine

    /**
     * Queues [command] itself (no wrapper, no allocation).
     *
     * @param command the task to run.
     */
    override fun execute(command: Runnable): Unit = engine.execute(command)

    /**
     * Queues [task]; its [ForkedTask] is interrupted by `cancel(true)` while it runs.
     *
     * @param task the task to call; its result completes the returned [ForkedTask].
     */
    override fun <T> submit(task: Callable<T>): ForkedTask<T> = engine.submit(task) as ForkedTask<T>

    /**
     * Queues [task]; its [ForkedTask] completes with null and is interrupted by `cancel(true)` while it runs.
     *
     * @param task the task to run.
     */
    override fun submit(task: Runnable): ForkedTask<*> = engine.submit(task, null) as ForkedTask<*>

    /**
     * Queues [task]; its [ForkedTask] completes with [result] and is interrupted by `cancel(true)` while it runs.
     *
     * @param task the task to run.
     * @param result the value the returned [ForkedTask] completes with once [task] has run.
     */
    override fun <T> submit(task: Runnable, result: T): ForkedTask<T> = engine.submit(task, result) as ForkedTask<T>

    /**
     * Runs [tasks] and waits until all are done; returns their [ForkedTask]s in the order of
     * [tasks]. From Java the result is a `List<ForkedTask<T>>` too.
     *
     * @param tasks the tasks to call.
     */
    override fun <T> invokeAll(tasks: Collection<Callable<T>>): List<ForkedTask<T>> = engine.invokeAll(tasks) as List<ForkedTask<T>>

    /**
     * Runs [tasks] and waits until all are done or [timeout] passes, then cancels (with
     * interrupt) those not done; returns their [ForkedTask]s in the order of [tasks]. A zero or
     * negative [timeout] does not wait.
     *
     * @param tasks the tasks to call.
     * @param timeout the longest time to wait, in [unit]s.
     * @param unit the unit of [timeout].
     */
    override fun <T> invokeAll(tasks: Collection<Callable<T>>, timeout: Long, unit: TimeUnit): List<ForkedTask<T>> =
        engine.invokeAll(tasks, timeout, unit) as List<ForkedTask<T>>

    /**
     * Runs [tasks] until one completes normally and returns its result; cancels the others.
     *
     * @param tasks the tasks to call.
     */
    override fun <T> invokeAny(tasks: Collection<Callable<T>>): T = engine.invokeAny(tasks)

    /**
     * Runs [tasks] until one completes normally or [timeout] passes; returns that result and
     * cancels the others. A zero or negative [timeout] does not wait.
     *
     * @param tasks the tasks to call.
     * @param timeout the longest time to wait, in [unit]s.
     * @param unit the unit of [timeout].
     */
    override fun <T> invokeAny(tasks: Collection<Callable<T>>, timeout: Long, unit: TimeUnit): T =
        engine.invokeAny(tasks, timeout, unit)

    /**
     * Runs [command] after [delay] (zero or negative: now) on a worker of the pool.
     *
     * @param command the task to run.
     * @param delay the time from now to the run, in [unit]s.
     * @param unit the unit of [delay].
     * @throws RejectedExecutionException if the pool is shut down.
     */
    override fun schedule(command: Runnable, delay: Long, unit: TimeUnit): ScheduledFuture<*> =
        engine.schedule(Executors.callable(command, null), delay, 0L, unit)

    /**
     * Calls [callable] after [delay] (zero or negative: now) on a worker of the pool; the
     * future holds its result.
     *
     * @param callable the task to call.
     * @param delay the time from now to the call, in [unit]s.
     * @param unit the unit of [delay].
     * @throws RejectedExecutionException if the pool is shut down.
     */
    override fun <V> schedule(callable: Callable<V>, delay: Long, unit: TimeUnit): ScheduledFuture<V> =
        engine.schedule(callable, delay, 0L, unit)

    /**
     * Runs [command] first after [initialDelay], then every [period] from that first start
     * (a late run is followed at once by the next, never two at a time), until cancelled, it
     * throws, or the pool is shut down.
     *
     * @param command the task to run.
     * @param initialDelay the time from now to the first run, in [unit]s.
     * @param period the time from the start of one run to the start of the next, in [unit]s.
     * @param unit the unit of [initialDelay] and [period].
     * @throws IllegalArgumentException if [period] is zero or negative.
     * @throws RejectedExecutionException if the pool is shut down.
     */
    override fun scheduleAtFixedRate(command: Runnable, initialDelay: Long, period: Long, unit: TimeUnit): ScheduledFuture<*> =
        engine.schedulePeriodic(command, initialDelay, period, fixedRate = true, unit)

    /**
     * Runs [command] first after [initialDelay], then [delay] after the end of each run, until
     * cancelled, it throws, or the pool is shut down.
     *
     * @param command the task to run.
     * @param initialDelay the time from now to the first run, in [unit]s.
     * @param delay the time from the end of one run to the start of the next, in [unit]s.
     * @param unit the unit of [initialDelay] and [delay].
     * @throws IllegalArgumentException if [delay] is zero or negative.
     * @throws RejectedExecutionException if the pool is shut down.
     */
    override fun scheduleWithFixedDelay(command: Runnable, initialDelay: Long, delay: Long, unit: TimeUnit): ScheduledFuture<*> =
        engine.schedulePeriodic(command, initialDelay, delay, fixedRate = false, unit)

    /**
     * Waits until the pool has terminated or [timeout] passes; a zero or negative [timeout]
     * does not wait (it answers [isTerminated]).
     *
     * @param timeout the longest time to wait, in [unit]s.
     * @param unit the unit of [timeout].
     * @return whether the pool has terminated.
     * @throws IllegalStateException when called from a task of this pool, which would wait
     *   for itself.
     */
    override fun awaitTermination(timeout: Long, unit: TimeUnit): Boolean = engine.awaitTermination(unit.toNanos(timeout))

    /**
     * [shutdown], then waits until every accepted task has run and the pool's threads (workers
     * and starvation monitor) have finished, as `ExecutorService.close()` (JDK 19+) does. An
     * interrupt while waiting does not end the wait (and, unlike the JDK's default method, does
     * not discard queued work: use [shutdownNow] for that); it is set again before this returns.
     * Called from a task of this pool, it cannot wait for itself: it stops intake and returns.
     * Available on JDK 17 too.
     *
     * @throws UnsupportedOperationException on the shared pool's executor.
     */
    override fun close()
}

/** The [StealingExecutorService] over [engine], the executor of one pool (its `StealingDispatcher.executor`). */
@JvmSynthetic
internal fun executorServiceOf(engine: PoolExecutor): StealingExecutorService = PoolExecutorFace(engine)

/**
 * The one implementation of the sealed [StealingExecutorService]: the interface's own methods
 * delegate to [engine]; these are the ones without an argument. Private (compiled
 * package-private, so no user sees it): Kotlin keeps a sealed interface's implementations in its
 * package, and this is all of it that must be there.
 */
private class PoolExecutorFace(@JvmField val engine: PoolExecutor) : StealingExecutorService {
    override fun shutdown(): Unit = engine.shutdown()

    override fun shutdownNow(): List<Runnable> = engine.shutdownNow()

    override fun isShutdown(): Boolean = engine.isShutdown()

    override fun isTerminated(): Boolean = engine.isTerminated()

    // Declared, not inherited, so it is there on JDK 17 too and replaces the JDK 19+ default method.
    override fun close(): Unit = engine.close()

    override fun toString(): String = engine.toString()
}
