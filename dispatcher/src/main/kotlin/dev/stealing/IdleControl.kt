package dev.stealing

import java.lang.invoke.VarHandle
import java.util.concurrent.locks.LockSupport

/**
 * Who sleeps, who gets woken and how many threads run: the pool's idle stack, its counts of
 * searching, live and active workers, packed into one 64-bit word ([Ctl]) that changes only by
 * CAS or atomic add.
 *
 * *Active* workers are the live ones that are neither idle nor inside a blocking region
 * ([beginBlocking]); they are the ones that will look at the queues again. The pool keeps at most
 * `parallelism` of them: that is its CPU parallelism.
 *
 * The protocol (proof in `docs/parking.md`):
 * - A producer that publishes work (into the global queue or a deque) issues a full fence and
 *   calls [signalWork]. If a worker is already searching, or `parallelism` workers are active,
 *   nobody is woken: they carry the obligation. Otherwise the top idle worker is popped and
 *   unparked as a searcher, or a new thread is started as a searcher (lazily up to
 *   `parallelism`, beyond it up to `maxThreads` as compensation for blocked workers).
 * - A searcher that finds work calls [endSearch]; if it was the last searcher it calls
 *   [signalWork], so a burst of work wakes helpers one at a time (no thundering herd).
 * - A worker that finds nothing pushes itself on the idle stack in the same CAS that ends its
 *   search and its activity ([pushIdle]), fences, and re-scans every queue. If it finds work it
 *   wakes itself ([wakeSelf]); otherwise it parks until its state is no longer IDLE.
 *
 * No lost wake-up: the idle CAS + fence + re-scan of the sleeper and the publish + fence + read
 * of `ctl` of the producer form a Dekker pair, so at least one of them sees the other.
 *
 * Each worker has a park state ([Worker.parkState]): RUNNING (not on the stack), IDLE (on the
 * stack), RUNNING_ON_STACK (woke itself while still linked: the node is stale) and
 * RETIRED_ON_STACK (an extra thread that timed out and exited while linked). Whoever pops a node
 * claims it with a CAS on that state ([claimPopped]): only an IDLE node is woken; a stale or
 * retired one is unlinked and the popper's counts are undone. So a worker never needs to be
 * removed from the middle of the stack.
 *
 * Counting rule: a transition that makes a worker active adds to `active` *before* the worker
 * can act (so a count may briefly be one too high, never too low, which would let a field
 * borrow from its neighbour); one that makes it inactive subtracts before or with it.
 */
internal class IdleControl(private val pool: WorkStealingPool) {
    /** The pool's parallelism, kept here for [signalWork]'s check. */
    @JvmField val parallelism: Int = pool.parallelism

    /** The packed [Ctl] word; through [CTL] only. */
    @Suppress("unused") private var ctl: Long = 0

    fun ctl(): Long = CTL.getVolatile(this) as Long
    private fun cas(expected: Long, value: Long): Boolean = CTL.compareAndSet(this, expected, value)

    /** Atomically adds [delta]; returns the previous word. */
    private fun addCtl(delta: Long): Long = CTL.getAndAdd(this, delta) as Long

    /** Number of live worker threads. */
    val liveCount: Int get() = Ctl.live(ctl())

    /**
     * Wakes one idle worker or starts a new one, unless a worker is already searching or
     * `parallelism` workers are active. Callers publish their work and issue a full fence first
     * (see class comment).
     *
     * Inline: this check runs after every push, and when the pool is busy it is all that runs.
     * Each call site gets its own copy, so the JIT sees that site's own branch profile and does
     * not inline the wake-up path where it is cold (a fork/join loop) because it is hot at
     * another site (a coroutine dispatch that wakes workers often).
     */
    @Suppress("NOTHING_TO_INLINE")
    inline fun signalWork() {
        val c = ctl()
        if (Ctl.searching(c) == 0 && Ctl.active(c) < parallelism) wakeOrStartWorker()
    }

    /** The rest of [signalWork]: re-reads `ctl` and wakes or starts a searcher if still needed. */
    fun wakeOrStartWorker() {
        while (true) {
            val c = ctl()
            if (Ctl.searching(c) > 0 || Ctl.active(c) >= parallelism) return
            val top = Ctl.top(c)
            if (top != 0) {
                val w = pool.workerAt(top - 1)
                val next = w.nextIdle // racy read is fine: a stale value fails the versioned CAS
                if (cas(c, Ctl.withTop(c, next) + Ctl.ACTIVE_ONE + Ctl.SEARCHING_ONE)) {
                    if (claimPopped(w)) {
                        activated()
                        wake(w)
                        return
                    }
                    addCtl(-Ctl.ACTIVE_ONE - Ctl.SEARCHING_ONE) // stale or retired node: undo
                }
            } else if (Ctl.live(c) < pool.maxThreads) {
                if (cas(c, c + Ctl.LIVE_ONE + Ctl.ACTIVE_ONE + Ctl.SEARCHING_ONE)) {
                    activated()
                    startWorkerOrUndo()
                    return
                }
            } else {
                return // at the thread cap: the live workers will get to the work
            }
        }
    }

    /**
     * Starts one core worker if fewer than `parallelism` threads live; false if none was needed
     * or it could not be started (the pool is terminating).
     */
    fun startOneCoreWorker(): Boolean {
        while (true) {
            val c = ctl()
            if (Ctl.live(c) >= pool.parallelism) return false
            if (cas(c, c + Ctl.LIVE_ONE + Ctl.ACTIVE_ONE + Ctl.SEARCHING_ONE)) {
                activated()
                return startWorkerOrUndo()
            }
        }
    }

    /**
     * Claims a node just popped from the stack: true if it was an IDLE worker, now RUNNING and
     * to be unparked; false if it was stale (its worker already woke itself) or retired.
     */
    private fun claimPopped(w: Worker): Boolean {
        while (true) {
            when (val s = w.parkState()) {
                Worker.IDLE -> if (w.casParkState(s, Worker.RUNNING)) return true
                Worker.RUNNING_ON_STACK -> if (w.casParkState(s, Worker.RUNNING)) return false
                Worker.RETIRED_ON_STACK -> if (w.casParkState(s, Worker.RETIRED)) return false
                else -> error("popped worker ${w.index} in park state $s")
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
     * Makes [w] idle: pushes it on the stack (or, if its node is still linked from a wake-up in
     * place, turns that node IDLE again), ending its search and its activity. The caller must
     * then re-scan every queue and call [wakeSelf] if it finds work.
     */
    fun pushIdle(w: Worker) {
        goIdle(w, onlyIfSurplus = false)
    }

    /**
     * An extra worker whose thread is more than the pool needs, with an empty deque: goes idle
     * without a re-scan, but only if at least `parallelism` other workers stay active (checked
     * in the same CAS), so they will look at the queues before they sleep. False, and nothing
     * changed, if the pool no longer has a surplus.
     */
    fun tryPushSurplus(w: Worker): Boolean = goIdle(w, onlyIfSurplus = true)

    /**
     * The deactivation S1 (docs/parking.md). [w]'s block state becomes INACTIVE first, so the
     * starvation monitor can no longer presume it blocked; if the monitor already did (PRESUMED),
     * it already took [w] out of `active`, and this does not do it twice.
     */
    private fun goIdle(w: Worker, onlyIfSurplus: Boolean): Boolean {
        val previousBlockState = w.swapBlockState(Worker.INACTIVE)
        check(previousBlockState == Worker.NOT_BLOCKED || previousBlockState == Worker.PRESUMED) {
            "worker ${w.index} goes idle in block state $previousBlockState"
        }
        val counted = previousBlockState != Worker.PRESUMED
        val uncount = (if (counted) Ctl.ACTIVE_ONE else 0L) + (if (w.searching) Ctl.SEARCHING_ONE else 0L)
        // Surplus: the others still active once w is not must be at least parallelism.
        fun noSurplus(c: Long) = onlyIfSurplus && Ctl.active(c) - (if (counted) 1 else 0) < pool.parallelism
        if (w.parkState() == Worker.RUNNING_ON_STACK) {
            while (true) {
                val c = ctl()
                if (noSurplus(c)) {
                    w.setBlockState(previousBlockState)
                    return false
                }
                // The version bump keeps ctl from ever returning to an earlier value (allIdle).
                if (cas(c, c - uncount + Ctl.VERSION_ONE)) break
            }
            w.searching = false
            if (!w.casParkState(Worker.RUNNING_ON_STACK, Worker.IDLE)) {
                push(w) // a popper unlinked the node meanwhile (state RUNNING): push it again, counts done
            }
        } else {
            w.setParkState(Worker.IDLE) // before the node is reachable: poppers claim it from IDLE
            while (true) {
                val c = ctl()
                if (noSurplus(c)) {
                    w.setParkState(Worker.RUNNING) // never reachable: the CAS below did not happen
                    w.setBlockState(previousBlockState)
                    return false
                }
                w.nextIdle = Ctl.top(c) // plain: published by the CAS below
                if (cas(c, Ctl.withTop(c, w.index + 1) - uncount)) break
            }
            w.searching = false
        }
        // Dekker fence: the push above must be visible before the sleeper's re-scan reads the
        // queues. Pairs with the fullFence a producer issues between publishing work and
        // reading ctl in signalWork().
        VarHandle.fullFence()
        return true
    }

    private fun push(w: Worker) {
        w.setParkState(Worker.IDLE) // before the node is reachable: poppers claim it from IDLE
        while (true) {
            val c = ctl()
            w.nextIdle = Ctl.top(c) // plain: published by the CAS below
            if (cas(c, Ctl.withTop(c, w.index + 1))) return
        }
    }

    /**
     * [w] went idle and then saw work (or was unparked for its affinity queue): make it a
     * running searcher again. If it is on top of the stack it pops itself; otherwise it wakes in
     * place, leaving a stale node that the next popper unlinks. Either way no other thread is
     * woken: [w] takes the work itself.
     */
    fun wakeSelf(w: Worker) {
        while (true) {
            val c = ctl()
            if (Ctl.top(c) == w.index + 1) {
                if (cas(c, Ctl.withTop(c, w.nextIdle) + Ctl.ACTIVE_ONE + Ctl.SEARCHING_ONE)) {
                    w.setParkState(Worker.RUNNING) // popped by itself: no one else claims it
                    break
                }
            } else {
                addCtl(Ctl.ACTIVE_ONE + Ctl.SEARCHING_ONE + Ctl.VERSION_ONE)
                if (!w.casParkState(Worker.IDLE, Worker.RUNNING_ON_STACK)) {
                    // A popper claimed w meanwhile and counted it: undo ours.
                    addCtl(-Ctl.ACTIVE_ONE - Ctl.SEARCHING_ONE)
                    check(w.parkState() == Worker.RUNNING) { "worker ${w.index}: bad park state ${w.parkState()}" }
                }
                break
            }
        }
        w.searching = true
        w.setBlockState(Worker.NOT_BLOCKED) // counted again (by itself or by its claimer)
        activated()
    }

    /**
     * An idle extra worker whose keep-alive ran out: leaves the pool if still IDLE (its node
     * stays linked as a tombstone until popped). False if it was woken meanwhile.
     */
    fun tryRetire(w: Worker): Boolean {
        if (!w.casParkState(Worker.IDLE, Worker.RETIRED_ON_STACK)) return false
        addCtl(-Ctl.LIVE_ONE)
        return true
    }

    /** A running worker leaves the pool (shutdown): it stops counting as live and active. */
    fun exitRunning(w: Worker) {
        val counted = w.swapBlockState(Worker.INACTIVE) != Worker.PRESUMED
        val searchingDelta = if (w.searching) Ctl.SEARCHING_ONE else 0L
        w.searching = false
        addCtl(-Ctl.LIVE_ONE - (if (counted) Ctl.ACTIVE_ONE else 0L) - searchingDelta)
    }

    /**
     * The calling worker enters a blocking region (or the starvation monitor presumes it
     * blocked): it stops counting as active, and if work is waiting, another worker is woken or
     * started in its place.
     */
    fun beginBlocking() {
        addCtl(-Ctl.ACTIVE_ONE)
        // Dekker fence: the decrement must be visible before the re-scan below, or a producer
        // that read the old count (and so woke nobody) could be missed. Pairs with the fence
        // between a producer's publish and its read of ctl in signalWork().
        VarHandle.fullFence()
        if (pool.hasVisibleWork()) signalWork()
    }

    /** The worker left its blocking region: it counts as active again. */
    fun endBlocking() {
        addCtl(Ctl.ACTIVE_ONE)
        activated()
    }

    /**
     * After every transition that made a worker active: the monitor must be watching. (Not only
     * on 0 -> 1: a popper's count that it is about to undo can hide that transition.) One
     * volatile read when the monitor is awake.
     */
    private fun activated() {
        pool.monitor?.onPoolActive()
    }

    /** Pops and wakes every idle worker (shutdown). */
    fun wakeAll() {
        while (true) {
            val c = ctl()
            val top = Ctl.top(c)
            if (top == 0) return
            val w = pool.workerAt(top - 1)
            if (cas(c, Ctl.withTop(c, w.nextIdle) + Ctl.ACTIVE_ONE + Ctl.SEARCHING_ONE)) {
                if (claimPopped(w)) {
                    activated()
                    wake(w)
                } else {
                    addCtl(-Ctl.ACTIVE_ONE - Ctl.SEARCHING_ONE)
                }
            }
        }
    }

    /**
     * Whether [liveWorkers] workers (every live one) are idle on the stack, none is active and
     * none searching, and [nothingQueued] holds, from a consistent snapshot: the stack is walked
     * and the queues checked between two reads of ctl that must be equal (pushes and pops bump
     * the version; a wake in place and its re-idling bump it too).
     */
    fun allIdle(liveWorkers: Int, nothingQueued: () -> Boolean): Boolean {
        while (true) {
            val c = ctl()
            val n = idleOnStack(c)
            val idle = Ctl.searching(c) == 0 && Ctl.active(c) == 0 && n == liveWorkers
            // Queues are checked inside the snapshot: with every worker idle throughout and
            // ctl unchanged (every transition changes it for good: counts or version), nobody
            // could publish or take work meanwhile.
            val empty = idle && nothingQueued()
            if (ctl() == c) return empty
        }
    }

    /** Whether no worker is active (all idle or blocked). */
    fun noneActive(): Boolean = Ctl.active(ctl()) == 0

    /** Number of IDLE workers on the stack (racy; for stats). */
    fun idleCount(): Int = idleOnStack(ctl())

    /** Counts IDLE nodes from the top recorded in [c]; bounded even if links change meanwhile. */
    private fun idleOnStack(c: Long): Int {
        var n = 0
        var steps = 0
        var top = Ctl.top(c)
        while (top != 0 && steps <= Ctl.MAX_THREADS) {
            steps++
            val w = pool.workerAt(top - 1)
            if (w.parkState() == Worker.IDLE) n++
            top = w.nextIdle
        }
        return n
    }

    private fun wake(w: Worker) {
        LockSupport.unpark(w) // after the state CAS; the sleeper re-checks its state around park()
        val event = UnparkEvent()
        if (event.isEnabled) {
            event.pool = pool.name
            event.worker = w.index
            event.commit()
        }
    }

    /**
     * Starts a worker, already counted as live, active and searching. If the thread cannot be
     * started (no native threads left, or no free slot), the worker it was counted as never
     * exists: uncount it and report the failure to the pool's handler instead of throwing into
     * whoever signalled (a submitter whose task was already accepted, or a worker's loop).
     */
    private fun startWorkerOrUndo(): Boolean {
        val started = try {
            pool.startWorker()
        } catch (e: Throwable) {
            addCtl(-Ctl.LIVE_ONE - Ctl.ACTIVE_ONE - Ctl.SEARCHING_ONE)
            pool.reportFailure(Runnable { }, IllegalStateException("${pool.name}: cannot start a worker", e))
            // With no live worker, nobody would ever run what is queued: reject it instead.
            if (Ctl.live(ctl()) == 0) pool.rejectQueuedWithoutWorkers(e)
            return false
        }
        if (!started) addCtl(-Ctl.LIVE_ONE - Ctl.ACTIVE_ONE - Ctl.SEARCHING_ONE) // pool quiesced meanwhile
        return started
    }

    private companion object {
        val CTL: VarHandle = fieldHandle(IdleControl::class.java, "ctl", Long::class.javaPrimitiveType!!)
    }
}

/**
 * Layout of the pool's control word. Fields, low to high:
 * `TOP` (index + 1 of the top idle worker, 0 = none), `SEARCHING` (workers searching),
 * `LIVE` (worker threads alive), `ACTIVE` (live workers neither idle nor blocked), `VERSION`
 * (bumped on every stack pop/push, against ABA).
 *
 * Counts may briefly exceed the number of threads by up to one per thread (see the counting
 * rule in [IdleControl]), so [MAX_THREADS] leaves the 12-bit fields room for twice that.
 */
internal object Ctl {
    const val FIELD_BITS = 12
    const val FIELD_MASK = (1L shl FIELD_BITS) - 1
    const val VERSION_BITS = 16

    /** Most worker threads a pool may have (parallelism plus extras). */
    const val MAX_THREADS = (1 shl (FIELD_BITS - 1)) - 1

    const val TOP_SHIFT = 0
    const val SEARCHING_SHIFT = 12
    const val LIVE_SHIFT = 24
    const val ACTIVE_SHIFT = 36
    const val VERSION_SHIFT = 48

    const val TOP_MASK = FIELD_MASK shl TOP_SHIFT
    const val SEARCHING_MASK = FIELD_MASK shl SEARCHING_SHIFT
    const val LIVE_MASK = FIELD_MASK shl LIVE_SHIFT
    const val ACTIVE_MASK = FIELD_MASK shl ACTIVE_SHIFT
    const val VERSION_MASK = ((1L shl VERSION_BITS) - 1) shl VERSION_SHIFT

    const val SEARCHING_ONE = 1L shl SEARCHING_SHIFT
    const val LIVE_ONE = 1L shl LIVE_SHIFT
    const val ACTIVE_ONE = 1L shl ACTIVE_SHIFT
    const val VERSION_ONE = 1L shl VERSION_SHIFT

    fun top(c: Long): Int = ((c and TOP_MASK) ushr TOP_SHIFT).toInt()
    fun searching(c: Long): Int = ((c and SEARCHING_MASK) ushr SEARCHING_SHIFT).toInt()
    fun live(c: Long): Int = ((c and LIVE_MASK) ushr LIVE_SHIFT).toInt()
    fun active(c: Long): Int = ((c and ACTIVE_MASK) ushr ACTIVE_SHIFT).toInt()
    fun version(c: Long): Int = ((c and VERSION_MASK) ushr VERSION_SHIFT).toInt()

    /** [c] with the stack top replaced by [top] and the version bumped (wrapping). */
    fun withTop(c: Long, top: Int): Long {
        val version = (c + VERSION_ONE) and VERSION_MASK
        return (c and (TOP_MASK or VERSION_MASK).inv()) or version or (top.toLong() shl TOP_SHIFT)
    }
}
