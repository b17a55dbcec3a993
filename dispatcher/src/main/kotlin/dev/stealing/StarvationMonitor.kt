package dev.stealing

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
 * The monitor costs nothing while the pool is idle: when no worker is active and nothing is
 * queued it parks until a worker becomes active again ([onPoolActive], called through
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

    /** A worker became active: make sure the monitor is watching. */
    fun onPoolActive() {
        // Dekker with run(): the active count was raised before this read; the monitor writes
        // `sleeping` before it reads the active count.
        if (sleeping) LockSupport.unpark(this)
    }

    /** The pool is terminating: stop waiting. */
    fun wakeToExit() {
        LockSupport.unpark(this)
    }

    override fun run() {
        while (!pool.isStopping()) {
            LockSupport.parkNanos(this, intervalNanos)
            if (pool.isStopping()) break
            if (!look()) {
                sleeping = true // volatile write, then a volatile read of ctl: pairs with onPoolActive()
                VarHandle.fullFence()
                if (pool.idle.noneActive() && !pool.hasVisibleWork() && !pool.isStopping()) LockSupport.park(this)
                sleeping = false
            }
            interrupted()
        }
    }

    /** One look at every worker; false if there is nothing to watch (no active worker, no work). */
    private fun look(): Boolean {
        val workWaiting = pool.hasVisibleWork()
        var injected = false
        pool.workers.forEach { w ->
            val executed = w.executed // racy read of the owner's counter: only compared for change
            if (!w.inTask || executed != w.monitorLastExecuted) {
                w.monitorLastExecuted = executed
                w.monitorStalledTicks = 0
                return@forEach
            }
            w.monitorStalledTicks++
            if (injected || !workWaiting || w.idleNode.blockState != BlockState.NOT_BLOCKED) return@forEach
            val state = w.state
            val waiting = state == State.BLOCKED || state == State.WAITING || state == State.TIMED_WAITING
            val stalled = w.monitorStalledTicks >= if (waiting) WAITING_STALL_TICKS else RUNNABLE_STALL_TICKS
            if (stalled && pool.idle.presumeBlocked(w.idleNode)) {
                presumedCount++
                injected = true
            }
        }
        return workWaiting || !pool.idle.noneActive()
    }

    private companion object {
        /** Looks a waiting worker must go without starting a task before it is presumed blocked. */
        const val WAITING_STALL_TICKS = 2

        /** Intervals a RUNNABLE worker may go without starting a task before it is presumed blocked. */
        const val RUNNABLE_STALL_TICKS = 10
    }
}
