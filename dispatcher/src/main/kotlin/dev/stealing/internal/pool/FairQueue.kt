package dev.stealing.internal.pool

import dev.stealing.internal.jvm.fieldHandle
import dev.stealing.internal.queue.FairMember
import dev.stealing.internal.queue.FairRotation
import dev.stealing.internal.queue.MpmcTaskQueue
import java.lang.invoke.VarHandle
import java.util.concurrent.atomic.LongAdder

/**
 * One fair queue of the pool: its FIFO of tasks, its token in the pool's active list of fair
 * queues ([FairRotation]: offers O1 to O3, turns W1 to W5, with the proof), its turn of up to
 * [weight] tasks, close and discard. The public `FairQueueDispatcher` is its face to users.
 */
internal class FairQueue(
    private val pool: WorkStealingPool,
    /** The queue's name, shown in [toString] and in stats. */
    val name: String,
    /** Its share of the pool relative to the other fair queues' weights while they all have work. */
    val weight: Int,
) : FairMember {
    private val queue = MpmcTaskQueue(INITIAL_SEGMENT_CAPACITY)
    private val executed = LongAdder()
    private val discarded = LongAdder()
    @Volatile private var closedByUser = false

    /** This queue's token in the pool's active list ([FairRotation]). */
    private val turn = FairRotation.Turn(this)

    /**
     * True while [turn] is in the active list or held by the one party that will append or
     * serve it ([FairRotation]'s class comment); through [SCHEDULED]: set by CAS (O2, W5),
     * cleared by the holder's volatile write (W4).
     */
    @Suppress("unused") @Volatile private var scheduled = false

    /** The pool's rotation, in a field of its own: [dropToken] writes it with no call. */
    @JvmField val rotation: FairRotation = pool.fair

    /**
     * The holder of [turn] only: where a turn of more than one task is claimed ([weight] slots,
     * allocated on the first such turn). Each holder leaves it all null; the next one sees that
     * through the hand-off of the token (the active list's slot release and acquire, or the
     * flag's volatile write and CAS).
     */
    private var turnBuffer: Array<Runnable?>? = null

    /** Why an offer was refused: this queue was closed, or its pool was shut down. */
    fun whyRejected(): String =
        if (closedByUser) "fair queue $name of ${pool.label()} is closed" else "fair queue $name: ${pool.label()} is shut down"

    /**
     * Queues [task] (O1) and makes sure this queue is in the active list or held by someone who
     * will look at it again (O2, O3 in [FairRotation]). After the pool's shutdown (not this
     * queue's own close), a worker's continuations still run, on its own deque.
     */
    fun offer(task: Runnable): Boolean {
        if (queue.offer(task)) { // O1: the CAS claiming the slot precedes O2 (program order)
            // O2: a volatile read first, so a flood onto a queue that is already scheduled does
            // not write the flag's cache line. The read, like the CAS, pairs with the holder's
            // clear + fence + re-check (W4, W5): if it sees true, the holder's re-check comes
            // after it and sees this task's slot.
            if (!(SCHEDULED.getVolatile(this) as Boolean) && SCHEDULED.compareAndSet(this, false, true)) {
                try {
                    rotation.append(turn) // O3: the claiming CAS orders it before the read of ctl (as a global offer)
                } catch (e: Throwable) {
                    dropToken()
                    throw e
                }
                pool.signalAfterGlobalOffer()
            }
            return true
        }
        if (!closedByUser) {
            val w = pool.currentWorker()
            if (w != null && pool.execute(task)) return true
        }
        pool.rejected.increment()
        return false
    }

    /**
     * The worker that took [turn] from the active list (W1): this queue's turn, W2 to W5 in
     * [FairRotation]. Takes up to [weight] tasks, returns the oldest to run now and pushes the
     * rest onto the worker's own deque, newest first, so they pop in FIFO order and stay
     * stealable; then hands the token on. Null if nothing was ready. Called from a thread that
     * is not a worker of the pool (tests), a turn is one task.
     */
    override fun takeTurn(): Runnable? {
        val worker = pool.currentWorker()
        val first: Runnable?
        var pushed = false
        if (weight == 1 || worker == null) {
            first = queue.poll()
            if (first != null) executed.increment()
        } else {
            val buffer = turnBuffer ?: arrayOfNulls<Runnable>(weight).also { turnBuffer = it }
            val n = queue.pollBatch(buffer) // one CAS claims the run
            for (k in n - 1 downTo 1) {
                worker.deque.push(buffer[k]!!) // published by the fence in handOnTurn()
                buffer[k] = null
            }
            first = buffer[0]
            buffer[0] = null
            if (n > 0) executed.add(n.toLong())
            pushed = n > 1
        }
        // Leaves the registry once closed and drained. Either this check or close()'s sees it:
        // our poll precedes our read of closedByUser, close() writes it before it closes the
        // queue and reads the positions.
        if (closedByUser && queue.isDrained()) pool.fair.remove(this)
        handOnTurn(pushed)
        return first
    }

    /** End of a turn: W3, or W4 and W5 (see [FairRotation]). [pushed]: tasks went onto the worker's deque. */
    private fun handOnTurn(pushed: Boolean) {
        if (queue.size() > 0) { // W3: still has work (or a claimed slot); the token stays scheduled
            pool.fair.append(turn)
            pool.signalAfterPublish() // fence: orders the deque pushes and the append before the read of ctl
            return
        }
        // W4: release the token. The volatile write pairs with the producers' read and CAS in
        // offer() (O2); the fence orders it before the re-check's read of the queue's enqueue
        // index, which pairs with the producers' claiming CAS (O1).
        SCHEDULED.setVolatile(this, false)
        VarHandle.fullFence()
        // W5: a producer whose O2 saw true before our clear has its slot claimed by now.
        val again = queue.size() > 0 && SCHEDULED.compareAndSet(this, false, true)
        if (again) {
            try {
                pool.fair.append(turn)
            } catch (e: Throwable) {
                dropToken()
                throw e
            }
        }
        if (again || pushed) pool.signalAfterPublish()
    }

    /**
     * An Error cut an append of this queue's token short (a deep producer's `StackOverflowError`):
     * nobody holds the token now, and no later offer would append it while the flag says
     * somebody does. Gives the token up, with plain stores only (a call could fail again), for
     * the starvation monitor ([FairRotation.rescheduleDropped]) or, after shutdown, a worker's
     * [FairRotation.pollUnscheduled] to take. Before, the queue's work waited for ever, and a
     * shut-down pool never quiesced (its workers searched without end for work they saw).
     */
    @Suppress("NOTHING_TO_INLINE")
    private inline fun dropToken() { // inline: the catches that call it must make no call
        // Volatile stores, in this order: pairs with the volatile read and CAS of O2 (offer) and
        // tryTakeToken, and a completer that reads tokenDropped set then finds the flag false.
        scheduled = false
        rotation.tokenDropped = true
    }

    /** The monitor ([FairRotation.rescheduleDropped]): takes the token of this queue if it has work and nobody holds it, and appends it. */
    override fun rescheduleIfStranded(): Boolean {
        if (queue.size() == 0 || !tryTakeToken()) return false
        try {
            rotation.append(turn)
        } catch (e: Throwable) {
            dropToken()
            throw e
        }
        return true
    }

    /** A worker takes this queue's token without an offer (O2's CAS): [FairRotation.pollUnscheduled]. */
    override fun tryTakeToken(): Boolean =
        !(SCHEDULED.getVolatile(this) as Boolean) && SCHEDULED.compareAndSet(this, false, true)

    /** Tasks queued here (racy; includes offers in progress). */
    override fun queuedCount(): Int = queue.size()

    /** Pool shutdown: no more intake; queued work still runs. */
    override fun closeIntake() {
        queue.close()
    }

    /** Pool stop (intake already closed): hands back every queued task, including offers still being written. */
    override fun drainInto(into: MutableList<Runnable>) {
        while (!queue.isDrained()) into += queue.poll() ?: continue
    }

    /** Stops intake; what is queued still runs, then the queue leaves the pool's rotation. Idempotent. */
    fun close() {
        closedByUser = true
        queue.close()
        if (queue.isDrained()) pool.fair.remove(this)
    }

    /** Closes this queue and discards its backlog ([discard]); returns how many tasks were discarded. */
    fun cancelPending(): Int {
        close()
        var n = 0
        while (!queue.isDrained()) { // until offers that got in before the close are written, too
            val task = queue.poll()
            if (task == null) {
                Thread.onSpinWait()
                continue
            }
            n++
            // Anything else is dropped on request; counted in the return value and in stats.
            discard(task, "cancelPending() on fair queue $name of ${pool.label()}")
        }
        discarded.add(n.toLong())
        pool.fair.remove(this)
        return n
    }

    /** Whether [close] or [cancelPending] was called. */
    val isClosed: Boolean get() = closedByUser

    fun snapshot(): FairQueueSnapshot =
        FairQueueSnapshot(name, weight, queue.size(), executed.sum(), discarded.sum(), closedByUser)

    override fun toString(): String = "${pool.name}.fairQueue($name, weight = $weight)"

    private companion object {
        /** First segment of a fair queue's ring (it doubles as needed): many queues are small. */
        const val INITIAL_SEGMENT_CAPACITY = 64

        val SCHEDULED: VarHandle = fieldHandle(FairQueue::class.java, "scheduled", Boolean::class.javaPrimitiveType!!)
    }
}
