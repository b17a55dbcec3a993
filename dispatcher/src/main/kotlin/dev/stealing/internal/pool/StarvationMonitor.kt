package dev.stealing.internal.pool

import dev.stealing.internal.idle.BlockState
import dev.stealing.internal.idle.noneActive
import dev.stealing.internal.idle.presumeBlocked
import dev.stealing.internal.worker.Worker
import java.lang.invoke.VarHandle
import java.util.concurrent.atomic.AtomicBoolean
import java.util.concurrent.locks.LockSupport

/**
 * Starvation detection without any marking: the pool's "gate" thread. Every
 * [StealingOptions.starvationInterval] it looks at each worker that is inside a task; one that
 * has not started a task since the previous look while work is waiting somewhere in the pool is
 * presumed blocked ([IdleControl.presumeBlocked]): it stops counting as active, so an idle
 * worker is woken or an extra thread is started in its place. The presumption ends when that
 * task ends.
 *
 * Telling a blocked task from a long computation: a worker whose thread is BLOCKED, WAITING or
 * TIMED_WAITING is presumed blocked once it has started no task for [WAITING_STALL_TICKS]
 * consecutive looks (one to two intervals; one look alone could catch a worker just woken and
 * not yet scheduled); one that stays RUNNABLE (a long computation, or blocking in native I/O,
 * which the JVM also reports as RUNNABLE) only after [RUNNABLE_STALL_TICKS] looks. Injections are paced: at most one per interval; marking
 * the blocking code with `blocking { }` compensates at once instead.
 *
 * Timers: a worker's due timers wait for it to finish its task unless another worker takes
 * them. When a worker whose earliest timer is due is blocked (a blocking region, or presumed),
 * or has been in the same task since the previous look, the monitor wakes or starts a worker
 * ([IdleControl.signalWork]), which takes the due timers from that worker's heap (the monitor
 * first takes in the timers other threads offered to a worker inside a task). While such a
 * worker has pending timers the monitor keeps looking, and looks no later than their deadline
 * if its owner is blocked, so a timer of a blocked worker fires about on time.
 *
 * Backstop: a look that finds work waiting while no worker counts as active wakes or starts a
 * worker ([IdleControl.signalWork]), so work whose wake-up was missed waits at most one
 * interval. The parking proof does not need it (docs/parking.md, "Forks onto a non-empty
 * deque"): it is a guard, added when forks were not fenced and a presumption's re-scan could
 * miss one.
 *
 * The monitor costs nothing while the pool is idle: when no worker is active, nothing is
 * queued and no worker inside a task holds a timer, it parks until a worker becomes active
 * again ([onPoolActive], called through
 * [IdleHost.workerActivated] after every transition that makes a worker active, not only the
 * one away from zero: a popper's count that it is about to undo can hide that one).
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
        var nextLook = System.nanoTime() + intervalNanos
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
                    LockSupport.park(this)
                }
                sleeping = false
                interrupted()
            }
            nextLook = System.nanoTime() + intervalNanos
        }
    }

    /**
     * One look at every worker; false if there is nothing to watch (no active worker, no work,
     * no worker inside a task holding timers).
     */
    private fun look(): Boolean {
        val workWaiting = pool.hasVisibleWork()
        var injected = false
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
            if (!w.inTask || executed != watch.lastExecuted) {
                watch.lastExecuted = executed
                watch.stalledTicks = 0
                return@forEach
            }
            watch.stalledTicks++
            if (injected || !workWaiting || w.idleNode.blockState != BlockState.NOT_BLOCKED) return@forEach
            val state = w.state
            val waiting = state == State.BLOCKED || state == State.WAITING || state == State.TIMED_WAITING
            val stalled = watch.stalledTicks >= if (waiting) WAITING_STALL_TICKS else RUNNABLE_STALL_TICKS
            if (stalled && pool.idle.presumeBlocked(w.idleNode)) {
                presumedCount++
                injected = true
            }
        }
        if (timersOverdue) pool.idle.signalWork() // a woken searcher takes them (WorkerTimers.takeOthersDueTimers)
        // Backstop: work waits and no worker counts as active. By the parking proof this does
        // not happen (docs/parking.md); if a re-scan ever missed work, wake or start a worker now.
        else if (workWaiting && pool.idle.noneActive()) pool.idle.signalWork()
        return workWaiting || timersHeld || !pool.idle.noneActive()
    }

    /**
     * What this monitor saw of one worker at its last look: its executed count, its top-level
     * task count, and the looks since the executed count last changed. This thread only.
     */
    private class Watch(val worker: Worker) {
        var lastExecuted = -1L
        var stalledTicks = 0
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
        /** Looks a waiting worker must go without starting a task before it is presumed blocked. */
        const val WAITING_STALL_TICKS = 2

        /** Intervals a RUNNABLE worker may go without starting a task before it is presumed blocked. */
        const val RUNNABLE_STALL_TICKS = 10

        /** Shortest wait between two looks when a blocked worker's timer is due (or overdue). */
        const val MIN_TIMER_WAIT_NANOS = 1_000_000L
    }
}
