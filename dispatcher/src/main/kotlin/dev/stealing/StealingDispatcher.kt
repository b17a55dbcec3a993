@file:OptIn(InternalCoroutinesApi::class) // kotlinx.coroutines.Delay: see the README on upgrades

package dev.stealing

import dev.stealing.internal.pool.AffinityDispatcher
import dev.stealing.internal.pool.PoolExecutor
import dev.stealing.internal.pool.WorkStealingPool
import dev.stealing.internal.pool.captured
import dev.stealing.internal.pool.forkOrReject
import dev.stealing.internal.pool.label
import dev.stealing.internal.pool.rejectContinuation
import dev.stealing.internal.worker.runManagedBlocker
import kotlinx.coroutines.CancellableContinuation
import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.Delay
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.DisposableHandle
import kotlinx.coroutines.ExecutorCoroutineDispatcher
import kotlinx.coroutines.InternalCoroutinesApi
import java.util.concurrent.Callable
import java.util.concurrent.Executor
import java.util.concurrent.ForkJoinPool
import java.util.concurrent.RejectedExecutionException
import kotlin.coroutines.ContinuationInterceptor
import kotlin.coroutines.CoroutineContext

/**
 * A work-stealing coroutine dispatcher and executor.
 *
 * ```kotlin
 * withContext(StealingDispatcher) { ... }                  // the shared pool (StealingDispatcher.Default)
 * StealingDispatcher(parallelism = 4).use { pool ->        // an isolated pool
 *     withContext(pool) { ... }
 * }
 * ```
 * ```java
 * StealingDispatcher shared = StealingDispatcher.getShared(); // the shared pool, from Java
 * ```
 *
 * Each worker owns a deque: work dispatched from a worker goes onto its own deque and runs
 * newest-first; idle workers steal the oldest work of others. A coroutine that calls `yield()`
 * goes to the back of its worker's yield queue, which that worker serves only when it has
 * nothing else to run (others may steal from it). Work dispatched from any other thread goes to
 * a FIFO global queue. Idle workers park and cost no CPU;
 * they are woken one at a time as work appears, and no wake-up is ever lost (the proof is
 * in the design notes of the project's repository, docs/parking.md).
 *
 * `delay` and `withTimeout` never leave the pool: the timer is kept by the worker that created
 * it and fired by the workers (an idle worker parks no longer than its next deadline), with no
 * timer thread; see [scheduleResumeAfterDelay]. The [executor] is also a
 * [java.util.concurrent.ScheduledExecutorService] on the same timers.
 *
 * The pool starts its threads lazily, as work needs them. Each gets the context class loader of
 * the thread that created the pool (the shared pool's: the class loader of this library), not
 * that of the thread whose submission happened to start it, so a loader of a request, a plugin
 * or a test is never kept alive by the pool's threads, and every task sees the same loader
 * unless it sets its own.
 *
 * [close] stops intake, runs everything already accepted (pending `delay`s and delayed tasks
 * included, at their time) and joins the threads. After it, a coroutine dispatched here from
 * outside the pool has its job cancelled and finishes on [Dispatchers.IO], as with kotlinx's
 * own executor dispatchers (the job's `CancellationException` has as its cause a
 * [RejectedExecutionException] naming the pool: `StealingDispatcher 'compute' is closed`),
 * [executor] throws [RejectedExecutionException], and [fairQueue] [IllegalStateException].
 */
public class StealingDispatcher private constructor(
    @get:JvmSynthetic internal val pool: WorkStealingPool, // synthetic: Java sees no getter of the engine
    private val isShared: Boolean,
) : ExecutorCoroutineDispatcher(), Delay, ParallelOperations by parallelOperationsOf(pool) {

    /**
     * Creates an isolated pool, with its own threads and queues; close it when done.
     *
     * @param parallelism number of worker threads (started lazily), at least 1; defaults to the
     *   number of available processors.
     * @param name prefix of the worker threads' names and of [toString]; must not be blank;
     *   defaults to `stealing`.
     * @param options tuning and behaviour; defaults to [StealingOptions.DEFAULT].
     * @throws IllegalArgumentException if `parallelism` is out of range or `name` is blank.
     */
    @JvmOverloads
    public constructor(
        parallelism: Int = Runtime.getRuntime().availableProcessors(),
        name: String = "stealing",
        options: StealingOptions = StealingOptions.DEFAULT,
    ) : this(WorkStealingPool(parallelism, name, options.toPoolConfig()), isShared = false)

    /** The engine of [executor]; it makes its tasks as [ForkedTask]s. */
    @Suppress("UNCHECKED_CAST")
    private val poolExecutor = PoolExecutor(pool, closeable = !isShared) { c -> forkedTask(c as Callable<Any?>) }

    private val executorService = executorServiceOf(poolExecutor)

    /**
     * This pool as an [java.util.concurrent.ExecutorService] whose `submit` and `invokeAll`
     * return [ForkedTask]s (a `Callable` of `Integer` gives a `ForkedTask<Integer>`: no cast); `shutdown`, `shutdownNow`
     * and `awaitTermination` act on the pool.
     */
    override val executor: StealingExecutorService get() = executorService

    /** Number of worker threads this pool runs at most (for CPU work). */
    public val parallelism: Int get() = pool.parallelism

    /** Always true: work is always handed to the pool. */
    override fun isDispatchNeeded(context: CoroutineContext): Boolean = true

    override fun dispatch(context: CoroutineContext, block: Runnable) {
        if (!pool.execute(block)) rejectContinuation(context, block, "${pool.label()} is closed")
    }

    /**
     * `yield()` goes to the back of the worker's yield queue, so every task that worker can
     * take (its deque, the global and fair queues, its keyed work, the coroutines that yielded
     * before) runs first; from outside the pool, to the back of the global queue.
     */
    @InternalCoroutinesApi
    override fun dispatchYield(context: CoroutineContext, block: Runnable) {
        if (!pool.executeYield(block)) rejectContinuation(context, block, "${pool.label()} is closed")
    }

    /**
     * `delay` on this pool (kotlinx calls it; not for direct use). The timer goes into the heap
     * of the worker that runs the caller (from outside the pool: a worker chosen round-robin)
     * and, when due, the coroutine resumes on the worker that fires it, without a dispatch. A
     * cancelled `delay` removes its timer at once. A `limitedParallelism` view of this
     * dispatcher uses this too and resumes through the view. After [close], a `delay` from
     * outside the pool cancels the coroutine, as kotlinx's executor dispatchers do.
     */
    override fun scheduleResumeAfterDelay(timeMillis: Long, continuation: CancellableContinuation<Unit>): Unit =
        pool.timers.scheduleResume(timeMillis, continuation, this)

    /**
     * `withTimeout` on this pool (kotlinx calls it; not for direct use): [block] runs on a worker
     * of this pool when time is up; the returned handle, disposed when the block ends first,
     * removes the timer at once, so a `withTimeout` that ends early leaves nothing behind.
     */
    override fun invokeOnTimeout(timeMillis: Long, block: Runnable, context: CoroutineContext): DisposableHandle =
        pool.timers.scheduleTimeout(timeMillis, block, context)

    /**
     * Forks [task] onto this pool: queued on the caller's deque when called from a worker, else
     * on the global queue. [ForkedTask.join] runs it inline if it is still queued locally. Code
     * running in a task of this pool can fork without the pool at hand: [ForkedTask.fork].
     *
     * @param task the task to call; its result completes the returned [ForkedTask].
     * @throws RejectedExecutionException if the pool is shut down.
     */
    public fun <T> fork(task: Callable<T>): ForkedTask<T> = forkedTask(pool.captured(task)).also { pool.forkOrReject(it) }

    /**
     * A dispatcher for work keyed by [key]: every task dispatched through it runs on one and the
     * same worker thread of this pool, one at a time, in dispatch order, and is never stolen, so
     * state touched only under one key needs no locks (actors, per-account state):
     *
     * ```kotlin
     * withContext(pool.affinity(accountId)) { balance[accountId] = balance[accountId]!! + amount }
     * ```
     *
     * Keys that are `equals` get the same worker (and dispatchers that are `equals`); keys are
     * spread over the `parallelism` core workers by a mixed `hashCode()`, so two keys may share
     * a worker. That worker serves its keyed work and shared work alternately (32 tasks each way
     * while both wait), so neither starves. Keyed work waits while its worker blocks, even
     * inside `blocking { }`: it never moves to another thread. The first call starts all core
     * workers. It holds nothing of its own (it is a view of the pool, as `limitedParallelism`
     * is), so it can be had from a closed pool too; a coroutine dispatched through it then is
     * cancelled, as on the closed pool itself.
     *
     * @param key the key; work of keys that are `equals` runs on the same worker.
     */
    public fun affinity(key: Any): CoroutineDispatcher = AffinityDispatcher(pool, key)

    /**
     * The Executor form of [affinity]: tasks executed through it run on the one worker that
     * serves [key], one at a time, in order. Throws [RejectedExecutionException] after the pool
     * is shut down; a failure goes to the pool's exception handler.
     *
     * @param key the key; work of keys that are `equals` runs on the same worker.
     */
    public fun affinityExecutor(key: Any): Executor = AffinityDispatcher(pool, key)

    /**
     * A new fair queue on this pool: work dispatched to it is served round-robin against every
     * other open fair queue of the pool, a queue of weight 3 getting about three times the share
     * of one of weight 1 while both have work. Coroutines started on it resume on it, so
     * fairness holds for the whole coroutine. Close it when done; see [FairQueueDispatcher].
     *
     * @param name shown in [StealingStats.fairQueues]; defaults to `fair-<n>`; must not be blank.
     * @param weight 1..1000 (default 1).
     * @throws IllegalArgumentException if [name] is blank or [weight] out of range.
     * @throws IllegalStateException if this pool is closed (or shut down): a new queue could never
     *   run anything. Not [RejectedExecutionException], which `java.util.concurrent` reserves for
     *   a task an executor does not accept: no task is offered here, the call is made in a state
     *   that does not allow it (as `Thread.start` on a started thread). A queue created while the
     *   pool is being closed by another thread is created closed.
     */
    @JvmOverloads
    public fun fairQueue(name: String? = null, weight: Int = 1): FairQueueDispatcher {
        val queue = pool.newFairQueue(name, weight) // the arguments first; on a closed pool it is closed and unregistered
        check(!pool.isShutdown()) { "${pool.label()} is closed: cannot create fair queue ${name ?: queue.name}" }
        return fairQueueDispatcherOf(pool, queue)
    }

    /** A snapshot of this pool's counters and queue depths. */
    public fun stats(): StealingStats = stealingStatsOf(pool.stats())

    /**
     * Stops intake, runs everything already accepted, and waits for the pool's threads (its
     * workers and its starvation monitor) to finish. Idempotent. An interrupt does not end the wait (nothing accepted is dropped); the
     * interrupt status is set again when this returns. Called from a task running on this pool,
     * it cannot wait for itself: it stops intake and returns; the pool terminates once that task
     * and all queued work end. `executor.close()` does the same.
     *
     * @throws UnsupportedOperationException on the shared pool ([StealingDispatcher.shared]).
     */
    override fun close() {
        if (isShared) throw UnsupportedOperationException("The shared StealingDispatcher cannot be closed")
        pool.close()
    }

    /**
     * A short summary: the name, `parallelism`, the worker threads alive and the tasks queued,
     * for example `compute[parallelism = 4, threads = 2, queued = 17]`. [stats] has every figure.
     */
    override fun toString(): String {
        val s = stats()
        return "${pool.name}[parallelism = ${pool.parallelism}, threads = ${s.threads}, queued = ${s.queuedTasks}]"
    }

    /**
     * The shared pool, with one worker per available processor and daemon threads, created on
     * first use; it cannot be closed. One name per language:
     * - Kotlin: `StealingDispatcher` (this companion, `StealingDispatcher.Default` spelled out):
     *   `withContext(StealingDispatcher) { ... }`, `StealingDispatcher.fork { ... }`,
     *   `StealingDispatcher.stats()`, `StealingDispatcher.fairQueue(...)`.
     * - Java: `StealingDispatcher.getShared()`, a [StealingDispatcher] like any other
     *   (`StealingDispatcher.getShared().fork(task)`). This companion's own members are hidden
     *   from Java (`@JvmSynthetic`), so Java has no second spelling of them.
     *
     * Kotlin code that must pass the shared pool where the type [StealingDispatcher] is expected
     * uses [shared] (the property behind Java's `getShared()`), the same pool.
     */
    public companion object Default : CoroutineDispatcher(), Delay {
        private val instance: StealingDispatcher by lazy {
            StealingDispatcher(
                WorkStealingPool(
                    Runtime.getRuntime().availableProcessors(),
                    "StealingDispatcher.Default",
                    StealingOptions.DEFAULT.toPoolConfig(),
                    // Not the first user's: created lazily, it would keep that caller's loader for good.
                    threadContextClassLoader = StealingDispatcher::class.java.classLoader,
                ),
                isShared = true,
            )
        }

        /**
         * The shared pool as a [StealingDispatcher]: Java's name for the shared pool,
         * `StealingDispatcher.getShared()`. In Kotlin write `StealingDispatcher` (the companion,
         * with the same members) and use this only where the type [StealingDispatcher] is
         * expected; the same pool, threads and queues. Its `close()`, and the `shutdown` methods
         * of its executor, throw [UnsupportedOperationException].
         */
        @JvmStatic
        public val shared: StealingDispatcher get() = instance

        /** Number of worker threads of the shared pool: the number of available processors. */
        @get:JvmSynthetic
        public val parallelism: Int get() = instance.parallelism

        /** The shared pool as a [StealingExecutorService]; it cannot be shut down. */
        @get:JvmSynthetic
        public val executor: StealingExecutorService get() = instance.executor

        /** Always true: work is always handed to the pool. */
        override fun isDispatchNeeded(context: CoroutineContext): Boolean = true

        override fun dispatch(context: CoroutineContext, block: Runnable): Unit = instance.dispatch(context, block)

        /** `yield()` goes to the back of the worker's yield queue; see [StealingDispatcher.dispatchYield]. */
        @InternalCoroutinesApi
        override fun dispatchYield(context: CoroutineContext, block: Runnable): Unit =
            instance.dispatchYield(context, block)

        /** `delay` on the shared pool; see [StealingDispatcher.scheduleResumeAfterDelay]. */
        override fun scheduleResumeAfterDelay(timeMillis: Long, continuation: CancellableContinuation<Unit>): Unit =
            instance.pool.timers.scheduleResume(timeMillis, continuation, this)

        /** `withTimeout` on the shared pool; see [StealingDispatcher.invokeOnTimeout]. */
        override fun invokeOnTimeout(timeMillis: Long, block: Runnable, context: CoroutineContext): DisposableHandle =
            instance.pool.timers.scheduleTimeout(timeMillis, block, context)

        /** [StealingDispatcher.fork] on the shared pool. */
        @JvmSynthetic
        public fun <T> fork(task: Callable<T>): ForkedTask<T> = instance.fork(task)

        /** [StealingDispatcher.stats] of the shared pool. */
        @JvmSynthetic
        public fun stats(): StealingStats = instance.stats()

        /** [StealingDispatcher.fairQueue] on the shared pool. */
        @JvmSynthetic
        public fun fairQueue(name: String? = null, weight: Int = 1): FairQueueDispatcher = instance.fairQueue(name, weight)

        /** [StealingDispatcher.affinity] on the shared pool. */
        @JvmSynthetic
        public fun affinity(key: Any): CoroutineDispatcher = instance.affinity(key)

        /** [StealingDispatcher.affinityExecutor] on the shared pool. */
        @JvmSynthetic
        public fun affinityExecutor(key: Any): Executor = instance.affinityExecutor(key)

        /**
         * The Java form of [blocking]: runs [blocker] (`block()` until it or `isReleasable()`
         * returns true) as a blocking region of the calling [StealingDispatcher] worker, so
         * another thread may run in its place meanwhile. On any other thread it is
         * `ForkJoinPool.managedBlock(blocker)` (which compensates on a `ForkJoinPool` and just
         * runs the blocker elsewhere).
         *
         * @param blocker the blocking operation.
         * @throws InterruptedException if `blocker.block()` does.
         */
        @JvmStatic
        @Throws(InterruptedException::class)
        public fun managedBlock(blocker: ForkJoinPool.ManagedBlocker): Unit = runManagedBlocker(blocker)

        override fun toString(): String = "StealingDispatcher.Default"
    }
}

/**
 * The pool that the dispatcher of [context] runs on, if it is a [StealingDispatcher] itself (or
 * the shared one, [StealingDispatcher.Default]), not a view of one: what `forkJoin` and the
 * loops hand the engine, which does not know the API's dispatcher.
 */
@JvmSynthetic
internal fun poolOf(context: CoroutineContext): WorkStealingPool? = when (val i = context[ContinuationInterceptor]) {
    is StealingDispatcher -> i.pool
    StealingDispatcher -> StealingDispatcher.shared.pool
    else -> null
}
