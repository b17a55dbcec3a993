package dev.stealing.internal.pool

import dev.stealing.internal.idle.BlockState
import dev.stealing.internal.idle.finishLeftPops
import dev.stealing.internal.idle.noneActive
import dev.stealing.internal.idle.presumeBlocked
import dev.stealing.internal.worker.Worker
import java.lang.invoke.VarHandle
import java.util.concurrent.atomic.AtomicBoolean
import java.util.concurrent.locks.LockSupport

/**
 * Starvation detection without any marking: the pool's "gate" thread. It looks at each worker
 * that is inside a task [LOOKS_PER_INTERVAL] times every [StealingOptions.starvationInterval];
 * one that has not started a task since the previous look while work is waiting somewhere in
 * the pool is presumed blocked ([IdleControl.presumeBlocked]): it stops counting as active, so
 * an idle worker is woken or an extra thread is started in its place. The presumption ends
 * when that task ends.
 *
 * Telling a blocked task from a long computation: a worker whose thread is BLOCKED, WAITING or
 * TIMED_WAITING is presumed blocked at the first look that finds it still in the task it was
 * in at the look before ([WAITING_STALL_LOOKS]): so blocking that is not marked is noticed
 * within one interval of its start, while work waits (a task that blocks at once is found at
 * the second look after its start, at most two looks later; one that blocks later, at the next
 * look). Not at a single look: that could catch a worker just woken and not yet scheduled,
 * whose thread still shows the wait it is leaving. Looking twice per interval costs the monitor
 * twice the wake-ups of one look per interval, about 0.1% of a core at the default 100 ms
 * (docs/options.md). A worker that stays RUNNABLE (a long computation, or blocking in native
 * I/O, which the JVM also reports as RUNNABLE) is presumed blocked only after
 * [RUNNABLE_STALL_LOOKS] looks, ten intervals. Injections are paced: at most one per interval;
 * marking the blocking code with `blocking { }` compensates at once instead.
 *
 * Timers: a worker's due timers wait for it to finish its task unless another worker takes
 * them. When a worker whose earliest timer is due is blocked (a blocking region, or presumed),
 * or has been in the same task since the previous look, the monitor wakes or starts a worker
 * ([IdleControl.signalWork]), which takes the due timers from that worker's heap (the monitor
 * first takes in the timers other threads offered to a worker inside a task). While such a
 * worker has pending timers the monitor keeps looking, and looks no later than their deadline
 * if its owner is blocked, so a timer of a blocked worker fires about on time.
 *
 * Backstop, for what the parking proof does not cover: an Error that cut a signal short
 * (docs/parking.md, "Errors in the signalling path").
 * - Each look first finishes the steps of pops that an Error cut short
 *   ([IdleControl.finishLeftPops]).
 * - A look that finds work waiting while no worker counts as active wakes or starts a worker
 *   ([IdleControl.signalWork]).
 * - It does not trust the counts either: when work has waited through [BACKSTOP_STALLED_LOOKS]
 *   looks in a row (two intervals) with no task started on any worker in between, and fewer than `parallelism`
 *   workers inside a task and not blocked, it wakes or starts a worker whatever ctl says
 *   ([IdleControl.wakeOrStartRegardless]); a worker not inside a task whose keyed queue holds
 *   work and that started nothing since the last look is unparked (it wakes itself for it).
 *   So a lost wake-up, or a count that stands for a worker that does not exist, costs queued
 *   work a few intervals, never the pool.
 *
 * The monitor costs next to nothing while the pool is idle: when no worker is active, nothing is
 * queued and no worker inside a task holds a timer, it parks for [IDLE_LOOK_NANOS] or until a
 * worker becomes active again ([onPoolActive], called through [IdleHost.workerActivated] after
 * every transition that makes a worker active, not only the one away from zero: a popper's
 * count that it is about to undo can hide that one). Not without a limit: a signal that an
 * Error cut short before it changed anything leaves work queued and every thread parked.
 *
 * An Error of its own (an `OutOfMemoryError` while it looks) goes to the pool's failure handler,
 * and the monitor goes on.
 */
internal class StarvationMonitor(
    private val pool: WorkStealingPool,
    private val intervalNanos: Long,
) : Thread("${pool.name}-monitor") {
    @Volatile private var sleeping = false

    /** Times a worker was presumed blocked; written by this thread only, read by stats. */
    @Volatile var presumedCount = 0L
        private set
    private val started = AtomicBoolean()

    init {
        isDaemon = true // it never keeps the JVM alive; the workers decide that
        contextClassLoader = pool.threadContextClassLoader // as the workers' (WorkerHost says why)
    }

    fun startOnce() {
        if (started.compareAndSet(false, true)) start()
    }

    /** After the pool terminated: waits for this thread to end, if it was ever started. */
    fun joinIfStarted() {
        if (started.get()) join()
    }

    /** A worker became active: make sure the monitor is watching. */
    fun onPoolActive() {
        // Dekker with run(): the active count was raised before this read; the monitor writes
        // `sleeping` before it reads the active count.
        if (sleeping) LockSupport.unpark(this)
    }

    /**
     * A timer became the earliest of [target], a worker that is not idle: if the monitor sleeps
     * (it saw no active worker and no timer held by a worker in a task), or [target] is blocked
     * (the monitor waits for blocked workers' deadlines), wake it to look again. Called after
     * the adder's fence; pairs with the `sleeping` write and fence in [run].
     */
    fun onTimerAdded(target: Worker) {
        if (sleeping || BlockState.isBlocked(target.idleNode.blockState)) LockSupport.unpark(this)
    }

    /** The pool is terminating: stop waiting. */
    fun wakeToExit() {
        LockSupport.unpark(this)
    }

    override fun run() {
        while (!pool.isStopping()) {
            try {
                watchUntilStopping()
            } catch (e: Throwable) {
                reportAndPause(e)
            }
        }
        finishWakeUpsUntilTerminated()
    }

    /**
     * After the pool stopped: until it terminates, finishes the wake-ups that an Error cut short
     * after `stop()` woke everyone ([IdleControl.wakeAll], which finishes those left before it):
     * a popper's catch can leave one a moment later, and a worker idle under such a pop would
     * sleep for good, with the pool waiting for it to exit. One volatile read per interval
     * otherwise; [wakeToExit] ends the wait at termination.
     */
    private fun finishWakeUpsUntilTerminated() {
        while (!pool.isTerminated()) {
            try {
                pool.idle.wakeAll()
            } catch (e: Throwable) {
                reportAndPause(e)
            }
            LockSupport.parkNanos(this, intervalNanos)
        }
    }

    private fun reportAndPause(e: Throwable) {
        try {
            pool.reportFailure(this, e)
        } catch (_: Throwable) { // nothing more to do with it: go on watching
        }
        LockSupport.parkNanos(this, intervalNanos) // no hot loop if the error repeats
    }

    /** Looks at the workers [LOOKS_PER_INTERVAL] times per interval, or sleeps while nothing is active, until the pool stops. */
    private fun watchUntilStopping() {
        var nextLook = System.nanoTime() + lookNanos
        while (!pool.isStopping()) {
            val untilLook = nextLook - System.nanoTime()
            LockSupport.parkNanos(this, minOf(untilLook, maxOf(nanosToBlockedWorkersTimer(), MIN_TIMER_WAIT_NANOS)))
            if (pool.isStopping()) break
            interrupted()
            // A blocked worker cannot fire its own timers: hand a due one to a woken worker at once.
            if (nanosToBlockedWorkersTimer() <= 0) pool.idle.signalWork()
            if (System.nanoTime() - nextLook < 0) continue // woken early for a timer: not a look
            if (!look()) {
                sleeping = true // volatile write, then volatile reads of ctl and the heaps: pairs with onPoolActive() and onTimerAdded()
                VarHandle.fullFence()
                if (pool.idle.noneActive() && !pool.hasVisibleWork() && !timersHeldInTasks() && !pool.isStopping()) {
                    val limit = idleLookNanos
                    if (limit == Long.MAX_VALUE) LockSupport.park(this) else LockSupport.parkNanos(this, limit)
                }
                sleeping = false
                interrupted()
            }
            nextLook = System.nanoTime() + lookNanos
        }
    }

    /**
     * One look at every worker; false if there is nothing to watch (no active worker, no work,
     * no worker inside a task holding timers).
     */
    private fun look(): Boolean {
        pool.idle.finishLeftPops()
        // A shut-down pool whose last quiescence check was skipped (a submitter's tryQuiesce that an
        // Error cut short) would otherwise wait for ever: look again at each look.
        if (pool.isShutdown()) pool.tryQuiesce()
        if (pool.fair.rescheduleDropped()) pool.idle.signalWork()
        val workWaiting = pool.hasVisibleWork()
        var anyStarted = false // a task started on some worker since the previous look
        var running = 0 // workers inside a task and not blocked
        if (looksSinceInjection < LOOKS_PER_INTERVAL) looksSinceInjection++
        // At most one presumption per interval: none in the look after one (LOOKS_PER_INTERVAL = 2).
        val mayPresume = looksSinceInjection >= LOOKS_PER_INTERVAL
        var injected = false // in this look
        var timersHeld = false
        var timersOverdue = false
        val now = System.nanoTime()
        pool.workers.forEach { w ->
            val executed = w.counters.executed // racy read of the owner's counter: only compared for change
            val heap = w.timers
            val topLevel = w.topLevelTasks // racy, compared for change: nested runs do not count
            val watch = watchOf(w)
            if (w.inTask && heap != null) {
                pool.takeOffersOf(w, tryOnly = false) // it may not look in time
                if (heap.earliest != null) {
                    timersHeld = true
                    val blocked = BlockState.isBlocked(w.idleNode.blockState)
                    if (heap.isDue(now) && (blocked || topLevel == watch.lastTopLevel)) timersOverdue = true
                }
            }
            watch.lastTopLevel = topLevel
            if (executed != watch.lastExecuted) {
                anyStarted = true
            } else if (!w.inTask && w.keyedQueue?.hasWork() == true) {
                LockSupport.unpark(w) // keyed work only it may run, and it did not: it re-checks its own work
            }
            if (w.inTask && w.idleNode.blockState == BlockState.NOT_BLOCKED) running++
            if (!w.inTask || executed != watch.lastExecuted) {
                watch.lastExecuted = executed
                watch.looksWithoutStart = 0
                return@forEach
            }
            watch.looksWithoutStart++
            if (!mayPresume || injected || !workWaiting || w.idleNode.blockState != BlockState.NOT_BLOCKED) return@forEach
            val state = w.state
            val waiting = state == State.BLOCKED || state == State.WAITING || state == State.TIMED_WAITING
            val stalled = watch.looksWithoutStart >= if (waiting) WAITING_STALL_LOOKS else RUNNABLE_STALL_LOOKS
            if (stalled && pool.idle.presumeBlocked(w.idleNode)) {
                presumedCount++
                injected = true
                looksSinceInjection = 0
            }
        }
        if (timersOverdue) pool.idle.signalWork() // a woken searcher takes them (WorkerTimers.takeOthersDueTimers)
        // Backstop: work waits and no worker counts as active. By the parking proof this does
        // not happen (docs/parking.md); if a re-scan ever missed work, wake or start a worker now.
        else if (workWaiting && pool.idle.noneActive()) pool.idle.signalWork()
        // Backstop by progress, whatever ctl says: work waits, nothing started, capacity unused.
        stalledLooks = if (workWaiting && !anyStarted && running < pool.parallelism) stalledLooks + 1 else 0
        if (stalledLooks >= BACKSTOP_STALLED_LOOKS && !injected) {
            stalledLooks = 0
            backstopWakeUps++
            pool.idle.wakeOrStartRegardless()
        }
        return workWaiting || timersHeld || !pool.idle.noneActive()
    }

    /**
     * Longest sleep while the pool is idle: [IDLE_LOOK_NANOS]. Tests that check the wake-ups of
     * an idle monitor ([onPoolActive]) set it to Long.MAX_VALUE, no limit, so that the limit
     * does not wake it for them.
     */
    @Volatile var idleLookNanos = IDLE_LOOK_NANOS

    /** Looks in a row that found work waiting, no task started and capacity unused. This thread only. */
    private var stalledLooks = 0

    /** Looks since the last presumption, counting the current one, up to [LOOKS_PER_INTERVAL] (which allows the next). This thread only. */
    private var looksSinceInjection = LOOKS_PER_INTERVAL

    /** Time between two looks: the interval over [LOOKS_PER_INTERVAL]. */
    private val lookNanos = intervalNanos / LOOKS_PER_INTERVAL

    /** Wake-ups of the backstop by progress ([IdleControl.wakeOrStartRegardless]); this thread writes, tests read. */
    @Volatile var backstopWakeUps = 0L
        private set

    /**
     * What this monitor saw of one worker at its last look: its executed count, its top-level
     * task count, and the looks since the executed count last changed. This thread only.
     */
    private class Watch(val worker: Worker) {
        var lastExecuted = -1L
        var looksWithoutStart = 0
        var lastTopLevel = -1L
    }

    /** Per worker slot; a slot reused by a new worker starts a new watch. This thread only. */
    private var watches = arrayOfNulls<Watch>(0)

    private fun watchOf(w: Worker): Watch {
        if (w.index >= watches.size) watches = watches.copyOf(maxOf(w.index + 1, watches.size * 2))
        val watch = watches[w.index]
        if (watch != null && watch.worker === w) return watch
        return Watch(w).also { watches[w.index] = it }
    }

    /** Whether a worker inside a task (which cannot fire timers meanwhile) holds a timer. */
    private fun timersHeldInTasks(): Boolean {
        pool.workers.forEach { w -> if (w.inTask && w.timers?.hasPending() == true) return true }
        return false
    }

    /** Nanoseconds until the earliest timer of a blocked worker is due (Long.MAX_VALUE if none). */
    private fun nanosToBlockedWorkersTimer(): Long {
        var min = Long.MAX_VALUE
        val now = System.nanoTime()
        pool.workers.forEach { w ->
            if (w.inTask && BlockState.isBlocked(w.idleNode.blockState)) {
                pool.takeOffersOf(w, tryOnly = false)
                val e = w.timers?.earliest
                if (e != null) min = minOf(min, e.deadline - now)
            }
        }
        return min
    }

    private companion object {
        /**
         * Looks per `starvationInterval`: two, so that blocking is noticed within one interval of
         * its start (see the class documentation) at twice the monitor's wake-ups.
         */
        const val LOOKS_PER_INTERVAL = 2

        /**
         * Looks after the first one that saw a waiting worker in its task, with no task started
         * in between, before it is presumed blocked: one, so two looks in all.
         */
        const val WAITING_STALL_LOOKS = 1

        /** Looks a RUNNABLE worker may go without starting a task before it is presumed blocked: ten intervals. */
        const val RUNNABLE_STALL_LOOKS = 10 * LOOKS_PER_INTERVAL

        /** Shortest wait between two looks when a blocked worker's timer is due (or overdue). */
        const val MIN_TIMER_WAIT_NANOS = 1_000_000L

        /**
         * Looks in a row with work waiting, no task started and capacity unused before the
         * backstop wakes a worker regardless of ctl: two intervals' worth, so a worker that was
         * woken and is waiting for a core on a busy machine gets more than a whole interval first.
         */
        const val BACKSTOP_STALLED_LOOKS = 2 * LOOKS_PER_INTERVAL

        /** Longest sleep of the monitor while the pool is idle: a signal an Error cut short is found this late. */
        const val IDLE_LOOK_NANOS = 1_000_000_000L
    }
}
