package dev.stealing

import kotlinx.coroutines.ExecutorCoroutineDispatcher
import kotlinx.coroutines.InternalCoroutinesApi
import java.util.concurrent.Executor
import java.util.concurrent.RejectedExecutionException
import java.util.concurrent.atomic.LongAdder
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
 *
 * [close] stops intake: later dispatches are rejected (a coroutine resumed here afterwards is
 * cancelled, as with kotlinx's executor dispatchers), queued work still runs, and the queue
 * leaves the rotation once drained. [cancelPending] discards the backlog instead.
 */
public class FairQueueDispatcher internal constructor(
    private val pool: WorkStealingPool,
    /** The queue's name, shown in [toString] and [StealingStats.fairQueues]. */
    public val name: String,
    /** Its share of the pool relative to the other fair queues' weights while they all have work. */
    public val weight: Int,
) : ExecutorCoroutineDispatcher() {
    private val queue = GlobalQueue(INITIAL_SEGMENT_CAPACITY)
    private val executed = LongAdder()
    private val discarded = LongAdder()
    @Volatile private var closedByUser = false

    /** Java users: tasks executed here are queued and served like dispatched coroutines. */
    override val executor: Executor = Executor { task ->
        if (!offer(task)) throw RejectedExecutionException("fair queue $name is closed")
    }

    /** Always true: work always goes through the queue, which is what makes it fair. */
    override fun isDispatchNeeded(context: CoroutineContext): Boolean = true

    override fun dispatch(context: CoroutineContext, block: Runnable) {
        if (!offer(block)) rejectContinuation(context, block)
    }

    /** `yield()` goes to the back of this queue. */
    @InternalCoroutinesApi
    override fun dispatchYield(context: CoroutineContext, block: Runnable): Unit = dispatch(context, block)

    /**
     * Queues [task] and wakes a worker (the claiming CAS of the offer orders it before the read
     * of ctl, as for the global queue: docs/parking.md). After the pool's shutdown (not this
     * queue's own close), a worker's continuations still run, on its own deque.
     */
    private fun offer(task: Runnable): Boolean {
        if (queue.offer(task)) {
            pool.idle.signalWork()
            return true
        }
        if (!closedByUser) {
            val w = pool.currentWorker()
            if (w != null && pool.execute(task)) return true
        }
        pool.rejected.increment()
        return false
    }

    /** Workers: one task, counted as executed; leaves the rotation when closed and drained. */
    internal fun pollForWorker(): Runnable? {
        val task = queue.poll()
        if (task != null) executed.increment()
        if (closedByUser && queue.isDrained()) pool.fair.remove(this)
        return task
    }

    /** Tasks queued here (racy; includes offers in progress). */
    internal fun queuedCount(): Int = queue.size()

    /** Pool shutdown: no more intake; queued work still runs. */
    internal fun closeIntake() {
        queue.close()
    }

    /** Pool stop (intake already closed): hands back every queued task, including offers still being written. */
    internal fun drainInto(into: MutableList<Runnable>) {
        while (!queue.isDrained()) into += queue.poll() ?: continue
    }

    /**
     * Stops intake; what is queued still runs, then the queue leaves the pool's rotation.
     * Idempotent. The pool itself keeps running.
     */
    override fun close() {
        closedByUser = true
        queue.close()
        if (queue.isDrained()) pool.fair.remove(this)
    }

    /**
     * Closes this queue and discards its backlog: queued tasks never run. A discarded
     * [ForkedTask] is cancelled, a discarded coroutine continuation has its job cancelled (it
     * completes on `Dispatchers.IO`, as after a pool shutdown), anything else is dropped.
     * Returns how many tasks were discarded.
     */
    public fun cancelPending(): Int {
        close()
        var n = 0
        while (!queue.isDrained()) { // until offers that got in before the close are written, too
            val task = queue.poll()
            if (task == null) {
                Thread.onSpinWait()
                continue
            }
            n++
            when (task) {
                is ForkedTask<*> -> task.cancel(false)
                is kotlin.coroutines.Continuation<*> -> rejectContinuation(task.context, task)
                else -> Unit // dropped on request; counted in the return value and in stats
            }
        }
        discarded.add(n.toLong())
        pool.fair.remove(this)
        return n
    }

    /** Whether [close] or [cancelPending] was called. */
    public val isClosed: Boolean get() = closedByUser

    internal fun stats(): FairQueueStats =
        FairQueueStats(name, weight, queue.size(), executed.sum(), discarded.sum(), closedByUser)

    override fun toString(): String = "${pool.name}.fairQueue($name, weight = $weight)"

    private companion object {
        /** First segment of a fair queue's ring (it doubles as needed): many queues are small. */
        const val INITIAL_SEGMENT_CAPACITY = 64
    }
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
public class FairQueueStats internal constructor(
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
