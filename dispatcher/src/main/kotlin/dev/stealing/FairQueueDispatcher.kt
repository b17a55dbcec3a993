@file:OptIn(InternalCoroutinesApi::class) // kotlinx.coroutines.Delay: see the README on upgrades

package dev.stealing

import dev.stealing.internal.pool.FairQueueSnapshot
import dev.stealing.internal.pool.FairQueue
import dev.stealing.internal.pool.WorkStealingPool
import dev.stealing.internal.pool.rejectContinuation
import kotlinx.coroutines.CancellableContinuation
import kotlinx.coroutines.Delay
import kotlinx.coroutines.DisposableHandle
import kotlinx.coroutines.ExecutorCoroutineDispatcher
import kotlinx.coroutines.InternalCoroutinesApi
import java.util.concurrent.Executor
import java.util.concurrent.RejectedExecutionException
import kotlin.coroutines.CoroutineContext

/**
 * A fair queue of a [StealingDispatcher] ([StealingDispatcher.fairQueue]): work dispatched
 * here waits in its own FIFO queue, and the pool's workers serve all open fair queues
 * round-robin, weighted by [weight]. A small batch that arrives behind a large one gets its
 * share at once instead of waiting for the large one to drain.
 *
 * ```kotlin
 * val clientA = pool.fairQueue("client-a")
 * val clientB = pool.fairQueue("client-b", weight = 3) // three times A's share while both have work
 * launch(clientB) { ... }                               // resumes go back to clientB's queue too
 * clientA.executor.execute { ... }                       // Java users
 * ```
 * ```java
 * FairQueueDispatcher clientA = pool.fairQueue("client-a");
 * clientA.getExecutor().execute(() -> handle(request));
 * ```
 *
 * [close] stops intake: later dispatches are rejected (a coroutine resumed here afterwards is
 * cancelled, as with kotlinx's executor dispatchers), queued work still runs, and the queue
 * leaves the rotation once drained. [cancelPending] discards the backlog instead.
 */
public sealed class FairQueueDispatcher(
    private val pool: WorkStealingPool,
    /** The queue itself: the pool's engine of this fair queue. */
    private val queue: FairQueue,
) : ExecutorCoroutineDispatcher(), Delay {
    // Internally the queue is in the pool's active list only while it has work, and yields up
    // to `weight` tasks per turn; the protocol and its proof are in docs/parking.md ("Fair queues").

    /** The queue's name, shown in [toString] and [StealingStats.fairQueues]. */
    public val name: String get() = queue.name

    /** Its share of the pool relative to the other fair queues' weights while they all have work. */
    public val weight: Int get() = queue.weight

    /** Java users: tasks executed here are queued and served like dispatched coroutines. */
    override val executor: Executor = Executor { task ->
        if (!queue.offer(task)) throw RejectedExecutionException("${queue.whyRejected()}; rejected $task")
    }

    /** Always true: work always goes through the queue, which is what makes it fair. */
    override fun isDispatchNeeded(context: CoroutineContext): Boolean = true

    override fun dispatch(context: CoroutineContext, block: Runnable) {
        if (!queue.offer(block)) rejectContinuation(context, block, queue.whyRejected())
    }

    /** `yield()` goes to the back of this queue. */
    @InternalCoroutinesApi
    override fun dispatchYield(context: CoroutineContext, block: Runnable): Unit = dispatch(context, block)

    /**
     * `delay` (kotlinx calls it): the timer is kept by the pool's workers and, when due, the
     * coroutine resumes through this queue, so it keeps its fair share.
     */
    override fun scheduleResumeAfterDelay(timeMillis: Long, continuation: CancellableContinuation<Unit>): Unit =
        pool.timers.scheduleResume(timeMillis, continuation, dispatcher = null)

    /** `withTimeout` (kotlinx calls it): runs on a worker of the pool when time is up. */
    override fun invokeOnTimeout(timeMillis: Long, block: Runnable, context: CoroutineContext): DisposableHandle =
        pool.timers.scheduleTimeout(timeMillis, block, context)

    /**
     * Stops intake; what is queued still runs, then the queue leaves the pool's rotation.
     * Idempotent. The pool itself keeps running.
     */
    override fun close() {
        queue.close()
    }

    /**
     * Closes this queue and discards its backlog: queued tasks never run. A discarded
     * [ForkedTask] is cancelled, a discarded coroutine continuation has its job cancelled (it
     * completes on `Dispatchers.IO`, as after a pool shutdown), anything else is dropped.
     * Returns how many tasks were discarded.
     */
    public fun cancelPending(): Int = queue.cancelPending()

    /** Whether [close] or [cancelPending] was called. */
    public val isClosed: Boolean get() = queue.isClosed

    override fun toString(): String = queue.toString()
}

/**
 * One fair queue in a [StealingStats] snapshot.
 *
 * @property name the queue's name.
 * @property weight its weight.
 * @property depth tasks waiting in it.
 * @property executed tasks workers took from it.
 * @property discarded tasks dropped by [FairQueueDispatcher.cancelPending].
 * @property closed whether it was closed (it stays listed until drained).
 */
public sealed class FairQueueStats(
    public val name: String,
    public val weight: Int,
    public val depth: Int,
    public val executed: Long,
    public val discarded: Long,
    public val closed: Boolean,
) {
    override fun toString(): String =
        "FairQueueStats(name=$name, weight=$weight, depth=$depth, executed=$executed, discarded=$discarded, closed=$closed)"
}

/**
 * The figures of [s], the engine's snapshot of one fair queue. Synthetic: Java sees no engine
 * type. [FairQueueStats] is sealed and [SnapshotFairQueueStats] its one implementation, so that
 * Java cannot construct one (a sealed class's constructor is private in the bytecode).
 */
@JvmSynthetic
internal fun fairQueueStatsOf(s: FairQueueSnapshot): FairQueueStats = SnapshotFairQueueStats(s)

/** See [fairQueueStatsOf]. */
private class SnapshotFairQueueStats(s: FairQueueSnapshot) :
    FairQueueStats(s.name, s.weight, s.depth, s.executed, s.discarded, s.closed)

/**
 * The fair queue [queue] of [pool]. [FairQueueDispatcher] is sealed and this is its one
 * implementation, so that its constructor, which takes engine types, is not Java's to call:
 * a sealed class's constructor is private in the bytecode.
 */
@JvmSynthetic
internal fun fairQueueDispatcherOf(pool: WorkStealingPool, queue: FairQueue): FairQueueDispatcher =
    PoolFairQueueDispatcher(pool, queue)

/** See [fairQueueDispatcherOf]. */
private class PoolFairQueueDispatcher(pool: WorkStealingPool, queue: FairQueue) : FairQueueDispatcher(pool, queue)
