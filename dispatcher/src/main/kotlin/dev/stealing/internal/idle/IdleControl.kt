package dev.stealing.internal.idle

import dev.stealing.internal.jvm.StackHeadroom
import dev.stealing.internal.jvm.TestHooks
import dev.stealing.internal.jvm.UnparkEvent
import dev.stealing.internal.jvm.fieldHandle
import dev.stealing.internal.jvm.jfrStarted
import java.lang.invoke.VarHandle
import java.util.function.IntConsumer
import java.util.concurrent.locks.LockSupport

/**
 * Who sleeps, who gets woken and how many threads run: the pool's idle stack, its counts of
 * searching, live and active workers, packed into one 64-bit word ([Ctl]) that changes only by
 * CAS or atomic add, and every worker's [IdleNode]. It (with its package's `IdleBlocking.kt` and
 * `IdleParking.kt`) is the only writer of idle and block state; it knows the pool only via [IdleHost].
 *
 * *Active* workers are the live ones that are neither idle nor inside a blocking region
 * ([enterBlocking]); they are the ones that will look at the queues again. The pool keeps at
 * most `parallelism` of them: that is its CPU parallelism.
 *
 * The protocol (proof in `docs/parking.md`):
 * - A producer that publishes work makes the publication visible before its read of ctl (a
 *   full fence after a deque push; the claiming CAS of a global or fair-queue offer) and calls
 *   [signalWork]. If a worker is already searching, or `parallelism` workers are active,
 *   nobody is woken: they carry the obligation. Otherwise the top idle worker is popped and
 *   unparked as a searcher, or a new thread is started as a searcher (lazily up to
 *   `parallelism`, beyond it up to `maxThreads` as compensation for blocked workers).
 * - A searcher that finds work calls [endSearch]; if it was the last searcher and it sees
 *   more work after its decrement, it calls [signalWork], so a burst of work wakes helpers
 *   one at a time (no thundering herd).
 * - A worker that finds nothing pushes itself on the idle stack in the same CAS that ends its
 *   search and its activity ([pushIdle]), fences, and re-scans every queue. If it finds work it
 *   wakes itself ([wakeSelf]); otherwise it parks ([parkWhileIdle]) until its node is no
 *   longer IDLE.
 *
 * No lost wake-up: the idle CAS + fence + re-scan of the sleeper and the publish + read of ctl
 * of the producer form a Dekker pair, so at least one of them sees the other. Claiming a
 * popped node ([claimPopped]) and the counting rule (a count may be briefly too high, never
 * too low) are in `docs/parking.md` too.
 */
internal class IdleControl(
    @JvmField val parallelism: Int,
    private val maxThreads: Int,
    private val poolName: String,
    @JvmField internal val host: IdleHost,
) {
    /** The packed [Ctl] word; through [CTL] only. */
    @Suppress("unused") private var ctl: Long = 0

    fun ctl(): Long = CTL.getVolatile(this) as Long
    private fun cas(expected: Long, value: Long): Boolean = CTL.compareAndSet(this, expected, value)

    /** Atomically adds [delta]; returns the previous word. */
    internal fun addCtl(delta: Long): Long = CTL.getAndAdd(this, delta) as Long

    /** Number of live worker threads. */
    val liveCount: Int get() = Ctl.live(ctl())

    /**
     * Whether more than `parallelism` workers are active: an extra worker counted as active is
     * then surplus (what [tryPushSurplus] checks in its CAS). A hint: it may be stale at once.
     */
    fun hasSurplus(): Boolean = Ctl.active(ctl()) > parallelism

    /**
     * Wakes one idle worker or starts a new one, unless a worker is already searching or
     * `parallelism` workers are active. Callers make their publication visible first (see
     * class comment).
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
        wakeOrStart(regardlessOfCounts = false)
    }

    /**
     * The starvation monitor's backstop by progress (`StarvationMonitor`): work has waited through
     * two looks in which no worker started a task and fewer than `parallelism` ran one, so a
     * wake-up was lost or a count stands for a worker that does not exist. Wakes the top idle
     * worker or starts one whatever the counts say. The woken worker is counted as any woken
     * worker is; if a phantom count stood too, the counts are one too high, the allowed direction.
     */
    fun wakeOrStartRegardless() {
        wakeOrStart(regardlessOfCounts = true)
    }

    private fun wakeOrStart(regardlessOfCounts: Boolean) {
        while (true) {
            val c = ctl()
            if (!regardlessOfCounts && (Ctl.searching(c) > 0 || Ctl.active(c) >= parallelism)) return
            val top = Ctl.top(c)
            if (top != 0) {
                val node = host.idleNode(top - 1)
                val next = node.nextIdle // racy read is fine: a stale value fails the versioned CAS
                if (cas(c, Ctl.withTop(c, next) + Ctl.ACTIVE_ONE + Ctl.SEARCHING_ONE) && finishPop(node)) return
            } else if (Ctl.live(c) < maxThreads) {
                // Stack first, then the count: the start and its undo then run within what was
                // reserved, so no StackOverflowError leaves the count standing (startWorkerOrUndo).
                StackHeadroom.reserve()
                if (cas(c, c + Ctl.LIVE_ONE + Ctl.ACTIVE_ONE + Ctl.SEARCHING_ONE)) {
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
            if (Ctl.live(c) >= parallelism) return false
            StackHeadroom.reserve() // as in wakeOrStartWorker
            if (cas(c, c + Ctl.LIVE_ONE + Ctl.ACTIVE_ONE + Ctl.SEARCHING_ONE)) return startWorkerOrUndo()
        }
    }

    /**
     * Tests only: called with a [PendingPop] step just before [finishPop] takes it, and with a
     * [FaultStep] (a counted start, the steps of an idle transition); a hook that throws stands
     * in for an Error there. Read only where [TestHooks.ENABLED] ([faultAt]), so elsewhere the
     * wake-up and parking paths never load it.
     */
    @Volatile internal var faultHook: IntConsumer? = null
        set(value) {
            TestHooks.requireEnabled()
            field = value
        }

    /**
     * Set after a catch left a step to a completer ([IdleNode.pendingPop]); cleared by the
     * completer that takes the steps, set again if an Error cuts its walk (`IdleRepair.kt`).
     */
    @Volatile @JvmField internal var repairPending = false

    /**
     * Claims a node just popped from the stack: true if it was IDLE, now RUNNING and to be
     * unparked; false if it was stale (its worker already woke itself) or retired.
     */
    internal fun claimPopped(node: IdleNode): Boolean {
        while (true) {
            when (val s = node.parkState()) {
                ParkState.IDLE -> if (node.casParkState(s, ParkState.RUNNING)) return true
                ParkState.RUNNING_ON_STACK -> if (node.casParkState(s, ParkState.RUNNING)) return false
                ParkState.RETIRED_ON_STACK -> if (node.casParkState(s, ParkState.RETIRED)) return false
                else -> error("popped worker ${node.index} in park state $s")
            }
        }
    }

    /**
     * [node]'s worker ran out of local work and starts searching, unless it already is. The count
     * first, the flag after: an Error in the add leaves both as they were (the flag is a plain
     * store, which cannot fail), never a flag without its count.
     */
    fun beginSearch(node: IdleNode) {
        if (node.searching) return
        addCtl(Ctl.SEARCHING_ONE)
        node.searching = true
    }

    /**
     * [node]'s worker found a task: if it was searching it stops, and if it was the last
     * searcher and more work is visible, it recruits a helper ([signalWork]). Without more
     * work a recruit would only wake a worker to search and park again, on the path of a
     * hand-off (a caller's round trip through the pool).
     */
    fun endSearch(node: IdleNode) {
        if (!node.searching) return
        val c = addCtl(-Ctl.SEARCHING_ONE) // then the flag, as in beginSearch
        node.searching = false
        // Dekker with a producer that saw this searcher counted and woke nobody: its publication
        // came before its read of ctl, and that read before this atomic add, so the re-scan
        // after the add sees the work if it is still queued (docs/parking.md, Step 3).
        if (Ctl.searching(c) == 1 && host.hasVisibleWork()) signalWork()
    }

    /**
     * Makes [node] idle: pushes it on the stack (or, if it is still linked from a wake-up in
     * place, turns that node IDLE again), ending its search and its activity. The caller must
     * then re-scan every queue and call [wakeSelf] if it finds work, else [parkWhileIdle].
     */
    fun pushIdle(node: IdleNode) {
        goIdle(node, onlyIfSurplus = false)
    }

    /**
     * An extra worker whose thread is more than the pool needs, with an empty deque: goes idle
     * without a re-scan, but only if at least `parallelism` other workers stay active (checked
     * in the same CAS), so they will look at the queues before they sleep. False, and nothing
     * changed, if the pool no longer has a surplus.
     */
    fun tryPushSurplus(node: IdleNode): Boolean = goIdle(node, onlyIfSurplus = true)

    /**
     * The deactivation S1 (docs/parking.md). [node]'s block state becomes INACTIVE first, so the
     * starvation monitor can no longer presume it blocked; if the monitor already did (PRESUMED),
     * it already took the worker out of `active`, and this does not do it twice.
     *
     * Re-idling a stale node (RUNNING_ON_STACK, left linked by [wakeSelf]) races a popper:
     * 1. W woke itself in place: its node is RUNNING_ON_STACK and still linked.
     * 2. W finds nothing again; its CAS on ctl below uncounts it (and bumps the version).
     * 3. A popper P pops W's node off the stack with its own CAS on ctl, counting it.
     * 4. P's [claimPopped] moves RUNNING_ON_STACK -> RUNNING, wakes nobody and undoes its count.
     * 5. W's CAS RUNNING_ON_STACK -> IDLE below fails: the node is no longer linked, so W
     *    [push]es it again (its counts are already done). Without this W would sleep IDLE but
     *    unreachable, and no producer could ever wake it.
     * If W's CAS in 5 comes before P's claim in 4, P claims an IDLE node, counts W and wakes
     * it: the ordinary pop.
     */
    private fun goIdle(node: IdleNode, onlyIfSurplus: Boolean): Boolean {
        val previousBlockState = node.swapBlockState(BlockState.INACTIVE)
        check(previousBlockState == BlockState.NOT_BLOCKED || previousBlockState == BlockState.PRESUMED) {
            "worker ${node.index} goes idle in block state $previousBlockState"
        }
        val counted = previousBlockState != BlockState.PRESUMED
        val uncount = (if (counted) Ctl.ACTIVE_ONE else 0L) + (if (node.searching) Ctl.SEARCHING_ONE else 0L)
        // Surplus: the others still active once this worker is not must be at least parallelism.
        fun noSurplus(c: Long) = onlyIfSurplus && Ctl.active(c) - (if (counted) 1 else 0) < parallelism
        if (node.parkState() == ParkState.RUNNING_ON_STACK) {
            while (true) {
                val c = ctl()
                if (noSurplus(c)) {
                    node.blockState = previousBlockState
                    return false
                }
                // The version bump keeps ctl from ever returning to an earlier value (allIdle).
                if (cas(c, c - uncount + Ctl.VERSION_ONE)) break // step 2
            }
            node.searching = false
            if (!node.casParkState(ParkState.RUNNING_ON_STACK, ParkState.IDLE)) { // step 5
                push(node) // a popper unlinked the node meanwhile (state RUNNING): push it again, counts done
            }
        } else {
            node.setParkState(ParkState.IDLE) // before the node is reachable: poppers claim it from IDLE
            while (true) {
                val c = ctl()
                if (noSurplus(c)) {
                    node.setParkState(ParkState.RUNNING) // never reachable: the CAS below did not happen
                    node.blockState = previousBlockState
                    return false
                }
                node.nextIdle = Ctl.top(c) // plain: published by the CAS below
                if (cas(c, Ctl.withTop(c, node.index + 1) - uncount)) break
            }
            node.searching = false
        }
        // Dekker fence: the push above must be visible before the sleeper's re-scan reads the
        // queues. Pairs with the producer's ordering of its publication before its read of ctl
        // in signalWork(): the fence in signalAfterPublish() after a deque
        // push, the claiming CAS of a global or fair-queue offer.
        VarHandle.fullFence()
        return true
    }

    private fun push(node: IdleNode) {
        node.setParkState(ParkState.IDLE) // before the node is reachable: poppers claim it from IDLE
        while (true) {
            val c = ctl()
            node.nextIdle = Ctl.top(c) // plain: published by the CAS below
            if (cas(c, Ctl.withTop(c, node.index + 1))) return
        }
    }

    /**
     * [node] went idle and then saw work (or has keyed work only it may run): make it a running
     * searcher again. If it is on top of the stack it pops itself; otherwise it wakes in place,
     * leaving a stale node that the next popper unlinks. Either way no other thread is woken:
     * this worker takes the work itself.
     *
     * Waking in place races a popper that reaches the node meanwhile:
     * 1. W pushed itself (IDLE, uncounted), re-scanned and found work; another node is on top.
     * 2. W counts itself active and searching again (the add below), before it can act.
     * 3. A popper P pops its way down to W's node, counts it, and claims it IDLE -> RUNNING
     *    ([claimPopped]); it will unpark W (a permit W's next park consumes harmlessly).
     * 4. W's CAS IDLE -> RUNNING_ON_STACK fails: P counted W and unlinked its node, so W undoes
     *    its own count of step 2. The node is RUNNING and off the stack, as after any pop.
     * If W's CAS comes first, the node becomes RUNNING_ON_STACK, and P's claim later finds it
     * stale and undoes P's count instead. Either way W is counted once, and between the two
     * adds and the undo the count is one too high, never too low.
     */
    fun wakeSelf(node: IdleNode) {
        while (true) {
            val c = ctl()
            if (Ctl.top(c) == node.index + 1) {
                if (cas(c, Ctl.withTop(c, node.nextIdle) + Ctl.ACTIVE_ONE + Ctl.SEARCHING_ONE)) {
                    node.setParkState(ParkState.RUNNING) // popped by itself: no one else claims it
                    break
                }
            } else {
                addCtl(Ctl.ACTIVE_ONE + Ctl.SEARCHING_ONE + Ctl.VERSION_ONE) // step 2
                if (!node.casParkState(ParkState.IDLE, ParkState.RUNNING_ON_STACK)) { // step 4
                    addCtl(-Ctl.ACTIVE_ONE - Ctl.SEARCHING_ONE)
                    check(node.parkState() == ParkState.RUNNING) {
                        "worker ${node.index}: bad park state ${node.parkState()}"
                    }
                }
                break
            }
        }
        resume(node)
    }

    /** [node]'s worker runs again, counted (by itself or by its claimer) as active and searching. */
    internal fun resume(node: IdleNode) {
        node.searching = true
        node.blockState = BlockState.NOT_BLOCKED
        host.workerActivated()
    }

    /** A running worker leaves the pool (shutdown): it stops counting as live and active. */
    fun exitRunning(node: IdleNode) {
        val counted = node.swapBlockState(BlockState.INACTIVE) != BlockState.PRESUMED
        val searchingDelta = if (node.searching) Ctl.SEARCHING_ONE else 0L
        node.searching = false
        addCtl(-Ctl.LIVE_ONE - (if (counted) Ctl.ACTIVE_ONE else 0L) - searchingDelta)
    }

    /**
     * A worker just stopped counting as active (a blocking region or a presumption,
     * `IdleBlocking.kt`): if work is waiting, another worker is woken or started in its place.
     */
    internal fun compensateUncounted() {
        // Dekker fence: the decrement must be visible before the re-scan below, or a producer
        // that read the old count (and so woke nobody) could be missed. Pairs with the
        // producer's ordering of its publication before its read of ctl in signalWork().
        VarHandle.fullFence()
        if (host.hasVisibleWork()) signalWork()
    }

    /**
     * Pops and wakes every idle worker (shutdown, stop), and finishes the wake-ups that an Error
     * cut short: a worker whose node a popper took off the stack and never claimed is idle too,
     * off the stack, and nothing else in a stopping pool wakes it (docs/parking.md, "Errors in
     * the signalling path").
     */
    fun wakeAll() {
        while (true) {
            val c = ctl()
            val top = Ctl.top(c)
            if (top == 0) break
            val node = host.idleNode(top - 1)
            if (cas(c, Ctl.withTop(c, node.nextIdle) + Ctl.ACTIVE_ONE + Ctl.SEARCHING_ONE)) finishPop(node)
        }
        finishLeftPops()
    }

    internal fun wake(node: IdleNode) {
        LockSupport.unpark(node.thread) // after the state CAS; the sleeper re-checks its state around park()
    }

    /** After [wake]: the monitor watches, and the wake-up is recorded. Nothing here is needed for the wake-up itself. */
    internal fun activated(node: IdleNode) {
        host.workerActivated()
        if (!jfrStarted()) return
        val event = UnparkEvent()
        if (event.isEnabled) {
            event.pool = poolName
            event.worker = node.index
            event.commit()
        }
    }

    companion object {
        /** [parkWhileIdle] without timers: never due. */
        val NO_DEADLINE: () -> Long = { Long.MAX_VALUE }

        /** [parkWhileIdle]: claimed by a waker before it parked. */
        const val PARK_CLAIMED_BEFORE = 0

        /** [parkWhileIdle]: parked, then claimed by a waker or woke itself for its own work. */
        const val PARK_WOKEN = 1

        /** [parkWhileIdle]: its keep-alive ran out and it retired. */
        const val PARK_RETIRED = 2

        private val CTL: VarHandle = fieldHandle(IdleControl::class.java, "ctl", Long::class.javaPrimitiveType!!)
    }
}
