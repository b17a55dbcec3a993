package dev.stealing

import java.lang.invoke.VarHandle
import java.util.concurrent.locks.LockSupport

/**
 * Who sleeps and who gets woken: the pool's idle stack, its count of searching workers and its
 * count of started workers, packed into one 64-bit word ([Ctl]) that changes only by CAS.
 *
 * The protocol (proof in `docs/parking.md`):
 * - A producer that publishes work (into the global queue or its own deque) issues a full
 *   fence and calls [signalWork]. If a worker is already searching, nobody is woken: the
 *   searcher carries the obligation. Otherwise the top idle worker is popped and unparked as a
 *   searcher, or, while fewer than `parallelism` threads exist, a new one is started as a
 *   searcher. When every worker is awake and busy, this costs one volatile read.
 * - A searcher that finds work calls [endSearch]; if it was the last searcher it calls
 *   [signalWork], so a burst of work wakes helpers one at a time (no thundering herd).
 * - A worker that finds nothing pushes itself on the idle stack in the same CAS that ends its
 *   search ([pushIdle]), fences, and re-scans every queue. If it finds work it undoes the push
 *   ([cancelIdle]); otherwise it parks until a waker clears its `idle` flag.
 *
 * No lost wake-up: the idle CAS + fence + re-scan of the sleeper and the publish + fence + read
 * of `ctl` of the producer form a Dekker pair, so at least one of them sees the other.
 *
 * Local pushes are fenced and signalled like outside ones: the pushing task may go on to block
 * (on a latch, a barrier, I/O) waiting for the very work it pushed, so "the pusher will run it
 * itself" is not a liveness argument.
 */
internal class IdleControl(private val pool: WorkStealingPool) {
    /** The packed [Ctl] word; through [CTL] only. */
    @Suppress("unused") private var ctl: Long = 0

    private fun ctl(): Long = CTL.getVolatile(this) as Long
    private fun cas(expected: Long, value: Long): Boolean = CTL.compareAndSet(this, expected, value)

    /** Atomically adds [delta]; returns the previous word. */
    private fun addCtl(delta: Long): Long = CTL.getAndAdd(this, delta) as Long

    /** Number of threads started so far (never decreases). */
    val startedCount: Int get() = Ctl.started(ctl())

    /** Number of workers currently searching for work. */
    val searchingCount: Int get() = Ctl.searching(ctl())

    /**
     * Wakes one idle worker or starts a new one, unless a worker is already searching. Callers
     * publish their work and issue a full fence first (see class comment).
     */
    fun signalWork() {
        while (true) {
            val c = ctl()
            if (Ctl.searching(c) > 0) return
            val top = Ctl.top(c)
            if (top != 0) {
                val w = pool.workerAt(top - 1)
                val next = w.nextIdle // racy read is fine: a stale value fails the versioned CAS
                if (cas(c, Ctl.withTop(c, next) + Ctl.SEARCHING_ONE)) {
                    wake(w)
                    return
                }
            } else if (Ctl.started(c) < pool.parallelism) {
                if (cas(c, c + Ctl.STARTED_ONE + Ctl.SEARCHING_ONE)) {
                    startWorkerOrUndo(Ctl.started(c))
                    return
                }
            } else {
                return // every worker is awake and not searching: they will find the work
            }
        }
    }

    /** The calling worker starts searching (it ran out of local work). */
    fun beginSearch() {
        addCtl(Ctl.SEARCHING_ONE)
    }

    /** The calling worker stops searching because it found work; recruits a helper if last. */
    fun endSearch() {
        val c = addCtl(-Ctl.SEARCHING_ONE)
        if (Ctl.searching(c) == 1) signalWork()
    }

    /**
     * Pushes [w] on the idle stack, ending its search in the same CAS. The caller must then
     * re-scan every queue and call [cancelIdle] if it finds work.
     */
    fun pushIdle(w: Worker) {
        w.idle = true // volatile; cleared by whoever pops w
        val searchingDelta = if (w.searching) Ctl.SEARCHING_ONE else 0L
        while (true) {
            val c = ctl()
            w.nextIdle = Ctl.top(c) // plain: published by the CAS below
            if (cas(c, Ctl.withTop(c, w.index + 1) - searchingDelta)) break
        }
        w.searching = false
        // Dekker fence: the push above must be visible before the sleeper's re-scan reads the
        // queues. Pairs with the fullFence a producer issues between publishing work and
        // reading ctl in signalWork().
        VarHandle.fullFence()
    }

    /**
     * [w] pushed itself idle and then saw work: take it off the stack if it is on top, otherwise
     * wake someone else to take the work (w stays on the stack until popped).
     */
    fun cancelIdle(w: Worker) {
        while (true) {
            val c = ctl()
            if (Ctl.top(c) != w.index + 1) break
            if (cas(c, Ctl.withTop(c, w.nextIdle) + Ctl.SEARCHING_ONE)) {
                w.idle = false
                w.searching = true
                return
            }
        }
        signalWork()
    }

    /** Pops and wakes every idle worker (shutdown). */
    fun wakeAll() {
        while (true) {
            val c = ctl()
            val top = Ctl.top(c)
            if (top == 0) return
            val w = pool.workerAt(top - 1)
            if (cas(c, Ctl.withTop(c, w.nextIdle) + Ctl.SEARCHING_ONE)) wake(w)
        }
    }

    /**
     * Whether [liveWorkers] workers (every live one) are on the idle stack and none is
     * searching, from a consistent snapshot: the stack is walked between two reads of ctl that
     * must be equal (the version makes that exact).
     */
    fun allIdle(liveWorkers: Int): Boolean {
        while (true) {
            val c = ctl()
            val n = stackDepth(c)
            if (ctl() == c) return Ctl.searching(c) == 0 && n == liveWorkers
        }
    }

    /** Number of workers on the idle stack (racy; for stats). */
    fun idleCount(): Int = stackDepth(ctl())

    /** Walks the idle stack from the top recorded in [c]; bounded even if links change meanwhile. */
    private fun stackDepth(c: Long): Int {
        var n = 0
        var top = Ctl.top(c)
        while (top != 0 && n <= Ctl.MAX_WORKERS) {
            n++
            top = pool.workerAt(top - 1).nextIdle
        }
        return n
    }

    private fun wake(w: Worker) {
        w.idle = false // volatile write before unpark; the sleeper re-checks it around park()
        LockSupport.unpark(w)
        val event = UnparkEvent()
        if (event.isEnabled) {
            event.pool = pool.name
            event.worker = w.index
            event.commit()
        }
    }

    /**
     * Starts worker [index], already counted as started and searching. If the thread cannot be
     * started (no native threads left), the searcher it was counted as never exists: uncount it
     * and report the failure to the pool's handler instead of throwing into whoever signalled
     * (a submitter whose task was already accepted, or a worker's loop). The slot stays counted
     * as started, since indices are handed out by that count; the pool runs with the workers
     * it has.
     */
    private fun startWorkerOrUndo(index: Int) {
        val started = try {
            pool.startWorker(index)
        } catch (e: Throwable) {
            addCtl(-Ctl.SEARCHING_ONE)
            pool.reportFailure(Runnable { }, IllegalStateException("${pool.name}: cannot start worker $index", e))
            return
        }
        if (!started) addCtl(-Ctl.SEARCHING_ONE) // pool quiesced meanwhile: no work to run
    }

    private companion object {
        val CTL: VarHandle = fieldHandle(IdleControl::class.java, "ctl", Long::class.javaPrimitiveType!!)
    }
}

/**
 * Layout of the pool's control word. Fields, low to high:
 * `TOP` (index + 1 of the top idle worker, 0 = none), `SEARCHING` (workers searching),
 * `STARTED` (threads started), `VERSION` (bumped on every stack pop/push, against ABA).
 */
internal object Ctl {
    const val FIELD_BITS = 16
    const val FIELD_MASK = (1L shl FIELD_BITS) - 1
    const val MAX_WORKERS = (1 shl (FIELD_BITS - 1)) - 1

    const val TOP_SHIFT = 0
    const val SEARCHING_SHIFT = 16
    const val STARTED_SHIFT = 32
    const val VERSION_SHIFT = 48

    const val TOP_MASK = FIELD_MASK shl TOP_SHIFT
    const val SEARCHING_MASK = FIELD_MASK shl SEARCHING_SHIFT
    const val STARTED_MASK = FIELD_MASK shl STARTED_SHIFT
    const val VERSION_MASK = FIELD_MASK shl VERSION_SHIFT

    const val SEARCHING_ONE = 1L shl SEARCHING_SHIFT
    const val STARTED_ONE = 1L shl STARTED_SHIFT
    const val VERSION_ONE = 1L shl VERSION_SHIFT

    fun top(c: Long): Int = ((c and TOP_MASK) ushr TOP_SHIFT).toInt()
    fun searching(c: Long): Int = ((c and SEARCHING_MASK) ushr SEARCHING_SHIFT).toInt()
    fun started(c: Long): Int = ((c and STARTED_MASK) ushr STARTED_SHIFT).toInt()
    fun version(c: Long): Int = ((c and VERSION_MASK) ushr VERSION_SHIFT).toInt()

    /** [c] with the stack top replaced by [top] and the version bumped (wrapping). */
    fun withTop(c: Long, top: Int): Long {
        val version = (c + VERSION_ONE) and VERSION_MASK
        return (c and (TOP_MASK or VERSION_MASK).inv()) or version or (top.toLong() shl TOP_SHIFT)
    }
}
