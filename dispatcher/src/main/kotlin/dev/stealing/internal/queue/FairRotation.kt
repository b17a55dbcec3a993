package dev.stealing.internal.queue

import java.util.concurrent.locks.ReentrantLock
import kotlin.concurrent.withLock

/**
 * The pool's fair queues ([FairMember]s: the pool's `FairQueue`, behind the public
 * `FairQueueDispatcher`) and the weighted round-robin by which workers serve them. Two
 * structures:
 *
 * - the *registry*: every open queue, idle or not, from its creation until it is closed and
 *   drained. Only statistics, shutdown and stop read it ([queues], [closeAll], [drainAll]); it
 *   changes under a lock.
 * - the *active list*: a FIFO of [Turn] tokens, one per queue that has work, never two for the
 *   same queue. Workers take the first token, serve that queue's turn and append the token at
 *   the back again if the queue still has work. This is the round-robin, and an idle queue is
 *   not in it: [poll] and [hasWork] cost the same with no fair queue and with 20,000 idle ones.
 *   It is a [MpmcTaskQueue] (the lock-free MPMC FIFO of the pool's outside submissions), whose
 *   entries must be Runnables: hence the token, which is never run.
 *
 * **Weights.** A queue of weight w yields up to w tasks on its turn
 * ([FairMember.takeTurn]): the worker runs the first and pushes the rest onto its own
 * deque newest first, so they pop in FIFO order and stay stealable (as a global-queue batch).
 * While several queues have work, each round of the active list therefore serves w tasks of a
 * queue of weight w, which is the share that weights promise. The batch is claimed with one CAS
 * into a buffer of `weight` slots that belongs to the queue (at most 1,000 references, allocated
 * on the queue's first turn with weight > 1; only the holder of the turn uses it). The
 * alternative, one task per turn and per-queue credits, would need a heavy queue to be served
 * again before the others, i.e. a second entry or a place at the front of the list, which a
 * FIFO with one token per queue does not have.
 *
 * **The protocol** (the tokio/Go "scheduled flag" pattern). Each queue has a `scheduled` flag,
 * true while its token is in the active list or held by the one party that will append it or
 * serve it (below: "the token is held").
 * - Producer (`FairQueue.offer`): O1 offers the task to the queue (a CAS on the
 *   queue's enqueue index claims its slot, then the task is written); O2 reads `scheduled`
 *   and, if false, CASes it false -> true; O3 if that CAS succeeded, appends the token (a CAS on
 *   the active list's enqueue index) and calls `signalWork`. A producer that finds the flag
 *   true does nothing more: whoever holds the token will see its task (5 below).
 * - Worker ([poll]): W1 takes the first token (a CAS on the active list's dequeue index: one
 *   worker gets it); W2 takes up to `weight` tasks; W3 if the queue still holds a task (or a
 *   claimed slot), appends the token again, fences and calls `signalWork` (the fence also
 *   publishes the tasks it pushed onto its deque); W4 otherwise clears `scheduled` (volatile
 *   write), fences, and W5 re-checks the queue (a volatile read of its enqueue index): if it
 *   holds a task and the CAS false -> true succeeds, appends the token; then fences and calls
 *   `signalWork` if it appended or pushed anything.
 *
 * **No stranded task.** The flag is true exactly from a successful CAS (O2 or W5) to the next
 * clear (W4), and only the party whose CAS succeeded, or the worker that took the token from the
 * list, appends it; so a queue is at most once in the list. At every moment, every task T queued
 * in a queue q is in one of these cases:
 * 1. q's token is in the active list: a re-scan sees it ([hasWork] counts the list's claimed
 *    slots, so also a token whose append is still being written), and the append was followed
 *    by `signalWork` (O3, W3, W5): it is a publication in the sense of `docs/parking.md`.
 * 2. A worker holds the token between W1 and W3/W4. It is running `findTask` (not parked), and
 *    reaches W3 or W4 in a bounded number of its own steps, without waiting for anyone. W1 hid
 *    q from re-scans; W3 publishes it again with a fence and `signalWork` ("Hiding and
 *    re-publishing" in `docs/parking.md`).
 * 3. The producer whose CAS at O2 set the flag holds the token before its append: it will
 *    append and signal (O3), as a producer between claiming a global-queue slot and its signal.
 * 4. A worker is between its clear (W4) and the end of W5. Its re-check sees T (by the argument
 *    in 5); if its CAS succeeds it appends and signals, and if it fails another party set the
 *    flag after the clear and holds the token (cases 1 to 3).
 * 5. T's producer has not yet done O2. When it does, it finds the flag false and takes the
 *    token (case 3), or true, and the token is held (cases 1 to 4).
 *
 * Nothing else can happen. Suppose T is in q, its producer P has done O2 (event X: a read or a
 * CAS of `scheduled` that saw or wrote true), the flag is false and no worker is between W4 and
 * the end of W5. The flag went from true (at X) to false, so a clear C by some worker H follows
 * X in the flag's modification order; let C be the last one. Volatile accesses and CASes are
 * totally ordered by the Java memory model, consistently with program order, so: P's claim of
 * T's slot (O1) < X < C < H's fence < H's re-check. The re-check thus saw T's slot claimed,
 * and T was still queued (a taken task stays taken), so H tried the CAS false -> true. If it
 * succeeded, the flag is true unless a clear followed: C was not the last. If it failed,
 * someone set the flag after C: the same. Either way a contradiction.
 *
 * So every queued fair task is visible to a re-scan (case 1), or will be published, with a
 * fence and `signalWork`, by a thread that is running and does not wait (cases 2 to 5): the
 * parking proof applies with the token's append as the task's publication. The re-check reads
 * the enqueue index (a claimed slot counts), not the slot: a failed O2 (a read that saw true)
 * orders P's claim before H's re-check, but not the write of the task itself. A queue re-appended
 * for a slot that is claimed but not yet written is taken again, found with nothing ready, and
 * re-checked, until its producer finishes writing: a short spin, as for a claimed global slot.
 *
 * **Quiescence** ([tryQuiesce]) may only end a shut-down pool when nothing is
 * queued. Cases 2 and 4 are workers that are not idle, and case 1 is in the active list; but
 * in cases 3 and 5 the producer may be an outside thread whose offer got in before the pool's
 * shutdown closed the queue. So from [closeAll] on, [hasWork] also asks every queue that was
 * registered when intake closed (no queue can accept work after that): O(queues), only while
 * a shut-down pool drains.
 *
 * A token can outlive its queue's tasks (`FairQueue.cancelPending` or a pool stop
 * takes tasks without a turn): the worker that takes it finds nothing, clears the flag and
 * drops it (W4), so it costs one empty turn.
 */
internal class FairRotation {
    /**
     * A queue's entry in the active list, which holds Runnables: never run, never in the list
     * twice (see the class comment).
     */
    class Turn(@JvmField val queue: FairMember) : Runnable {
        override fun run(): Unit = throw IllegalStateException("$queue: a fair queue's turn token is not a task")
    }

    /** Tokens of the queues with work, FIFO; never closed. */
    private val active = MpmcTaskQueue(ACTIVE_SEGMENT_CAPACITY)

    private val lock = ReentrantLock()

    /** Every open queue, in order of creation; guarded by [lock]. */
    private val registry = LinkedHashSet<FairMember>()

    /**
     * From [closeAll] on: every queue that was registered when intake closed, so every queue
     * that can hold work; null before. Written under [lock]; volatile for [hasWork].
     */
    @Volatile private var draining: Array<FairMember>? = null

    /** Number of open queues (and closed ones not yet drained). */
    val size: Int get() = lock.withLock { registry.size }

    /** The open queues, idle or not, in order of creation (for statistics and shutdown). */
    fun queues(): List<FairMember> = lock.withLock { registry.toList() }

    /**
     * Registers [queue], unless the pool is shut down ([isShutdown], read under the same lock as
     * [closeAll] runs under): then the queue is closed at once and stays out. A queue joins the
     * active list only when work is offered to it.
     */
    fun add(queue: FairMember, isShutdown: () -> Boolean) {
        lock.withLock {
            if (isShutdown()) queue.closeIntake() else registry += queue
        }
    }

    /** Unregisters [queue] if present (closed and drained); idempotent. */
    fun remove(queue: FairMember) {
        lock.withLock { registry -= queue }
    }

    /**
     * O3, W3, W5: appends [turn] at the back of the active list. Only the holder of the token
     * calls this (the party whose CAS set `scheduled`, or the worker that took it from the list).
     * The claiming CAS on the list's enqueue index pairs with the volatile read of that index in
     * [hasWork] (a sleeper's re-scan); the caller calls `signalWork` after it.
     */
    fun append(turn: Turn) {
        check(active.offer(turn)) { "the active list of fair queues is never closed" }
    }

    /**
     * Workers: the next task by weighted round-robin, or null if no queue has one ready. Takes
     * one token (W1; the claiming CAS on the list's dequeue index pairs with the append's
     * release of the slot, so the holder sees what the previous holder wrote) and serves that
     * queue's turn. One token per call, whatever the number of queues: a token whose queue has
     * nothing ready is dropped or re-appended, and the caller looks again later.
     */
    fun poll(): Runnable? {
        val turn = active.poll() as Turn? ?: return pollUnscheduled()
        return turn.queue.takeTurn()
    }

    /**
     * After [closeAll], with the active list empty: a queue that holds a claimed slot while
     * nobody holds its token. Its producer threw between its claim (O1) and O2, leaving the slot
     * skipped ([MpmcTaskQueue]); no later offer will schedule the queue, and quiescence, which
     * asks every draining queue ([hasWork]), would wait for ever. The worker takes the token
     * itself (the CAS of O2, so it holds it as that producer would have) and serves the turn,
     * which takes the skipped slot. Harmless for a live producer between O1 and O2: it then finds
     * the flag set, and the turn re-appends the token while the slot is unwritten (W3).
     */
    private fun pollUnscheduled(): Runnable? {
        val queues = draining ?: return null // volatile: pairs with the write in closeAll()
        for (q in queues) if (q.queuedCount() > 0 && q.tryTakeToken()) return q.takeTurn()
        return null
    }

    /**
     * Set (a plain volatile store, no call) when an Error cut an append of a token short and its
     * queue gave the token up (`FairQueue.dropToken`); cleared by [rescheduleDropped].
     */
    @Volatile @JvmField var tokenDropped = false

    /**
     * The starvation monitor, at each look: if a token was dropped, appends again the token of
     * every queue that has work and whose token nobody holds (O2's CAS, as a producer would).
     * True if it appended one (the caller signals). Harmless for a queue between a producer's
     * O1 and O2, or a holder's W4 and W5: exactly one CAS takes the token.
     */
    fun rescheduleDropped(): Boolean {
        if (!tokenDropped) return false
        tokenDropped = false // before the scan: a token dropped after it sets the flag again
        var appended = false
        for (q in queues()) if (q.rescheduleIfStranded()) appended = true
        return appended
    }

    /**
     * Whether some fair queue may hold a task: for re-scans (idle workers, the starvation
     * monitor, quiescence). A few volatile reads of the active list's indices, however many
     * queues are open (the read of the enqueue index pairs with the claiming CAS in [append]);
     * after [closeAll], also every queue that can still hold work.
     */
    fun hasWork(): Boolean {
        if (active.size() > 0) return true
        val queues = draining ?: return false // volatile: pairs with the write in closeAll()
        for (q in queues) if (q.queuedCount() > 0) return true
        return false
    }

    /**
     * Closes every queue's intake (pool shutdown or stop, after the run state moved on); queued
     * work still runs (shutdown) or is handed back ([drainAll]).
     */
    fun closeAll() {
        lock.withLock {
            for (q in registry) q.closeIntake()
            draining = registry.toTypedArray()
        }
    }

    /** Pool stop (after [closeAll]): every queued task of every queue, for handing back. */
    fun drainAll(into: MutableList<Runnable>) {
        for (q in queues()) q.drainInto(into)
    }

    private companion object {
        /** First segment of the active list (it doubles as needed, up to one entry per queue). */
        const val ACTIVE_SEGMENT_CAPACITY = 64
    }
}

/**
 * A fair queue as [FairRotation] sees it (the pool's fair queue implements it): its turn, its
 * depth, its token's flag, and closing and draining it.
 */
internal interface FairMember {
    /** The holder of this queue's token serves its turn (W2 to W5); the first task, or null. */
    fun takeTurn(): Runnable?

    /** Tasks queued (racy; includes offers in progress). */
    fun queuedCount(): Int

    /** Takes the token without an offer (O2's CAS), for [FairRotation]'s draining after a failed producer. */
    fun tryTakeToken(): Boolean

    /** Takes the token and appends it if the queue has work and nobody holds it ([FairRotation.rescheduleDropped]). */
    fun rescheduleIfStranded(): Boolean

    /** Pool shutdown: no more intake; queued work still runs. */
    fun closeIntake()

    /** Pool stop (intake already closed): hands back every queued task. */
    fun drainInto(into: MutableList<Runnable>)
}
