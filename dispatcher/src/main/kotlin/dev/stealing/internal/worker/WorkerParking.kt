package dev.stealing.internal.worker

import dev.stealing.internal.idle.IdleControl
import dev.stealing.internal.idle.finishLeftPops
import dev.stealing.internal.idle.parkWhileIdle
import dev.stealing.internal.jvm.ParkEvent
import dev.stealing.internal.jvm.jfrStarted

/**
 * A worker going idle and being woken, over the pool's [IdleControl] (push idle, fence,
 * re-scan, park: docs/parking.md). Owned by its [worker]'s thread.
 */
internal class WorkerParking(private val worker: Worker) {
    private val pool = worker.pool

    /**
     * For [IdleControl.parkWhileIdle]: work only this worker takes has arrived (keyed work, or
     * one of its timers is due, offered ones taken in first). Allocated once.
     */
    private val hasOwnWork: () -> Boolean = {
        worker.keyedQueue?.hasWork() == true || worker.timers?.let { heap ->
            heap.takeOffers()
            heap.isDue(System.nanoTime())
        } == true
    }

    /**
     * For [IdleControl.parkWhileIdle], called after the IDLE write and its fence: nanoseconds
     * until its earliest timer is due, or Long.MAX_VALUE. Publishes that deadline for offerers
     * first (`TimerHeap.publishParkDeadline`: an offer of an earlier timer then unparks this
     * worker).
     */
    private val nanosToOwnDeadline: () -> Long = {
        val e = worker.timers?.publishParkDeadline()
        if (e == null) Long.MAX_VALUE else e.deadline - System.nanoTime()
    }

    /**
     * Before going idle: drops the references the own queues still hold to tasks thieves took
     * (`WorkDeque.clearTakenIfEmpty`), so an idle worker keeps no finished task alive.
     */
    fun releaseTaken() {
        worker.deque.clearTakenIfEmpty()
        worker.yields.clearTakenIfEmpty()
    }

    /**
     * Owner only: true from the start of an idle push until the worker runs again ([idleTransition]).
     * An Error that escapes the worker's loop in between leaves its idle state half changed, which
     * `Worker.run` does not try to repair (it exits, as before); left true when an Error escapes.
     */
    var inIdleTransition = false
        private set

    /** Runs [block], an idle push and what follows it up to running again, as an idle transition. */
    inline fun <T> idleTransition(block: () -> T): T {
        enterIdleTransition()
        val result = block()
        leaveIdleTransition()
        return result
    }

    fun enterIdleTransition() {
        inIdleTransition = true
    }

    fun leaveIdleTransition() {
        inIdleTransition = false
    }

    /**
     * Goes idle: push on the idle stack, re-scan, park until woken. Returns false when the pool
     * is stopping or this worker retired, and it should exit.
     */
    fun parkIdle(): Boolean {
        if (pool.isStopping()) return false
        releaseTaken()
        pool.idle.finishLeftPops() // steps of another thread's wake-up that an Error cut short, if any (one volatile read)
        return idleTransition { pushIdleAndPark() }
    }

    private fun pushIdleAndPark(): Boolean {
        val node = worker.idleNode
        pool.idle.pushIdle(node)
        // Re-scan after the fenced push (see IdleControl): any work published before a
        // producer read ctl without seeing this worker idle is visible here.
        if (pool.hasVisibleWork() || hasOwnWork()) {
            pool.idle.wakeSelf(node)
            return true
        }
        if (pool.isShutdown()) pool.tryQuiesce() // after close(): the last worker to go idle ends the pool
        return awaitWakeUp()
    }

    /**
     * Parks while this worker is idle ([IdleControl.parkWhileIdle]: a core worker until woken
     * or until its earliest timer is due, an extra one for its keep-alive, then it retires),
     * counting the park.
     * Returns false if it retired.
     */
    fun awaitWakeUp(): Boolean {
        val event = if (jfrStarted()) ParkEvent() else null // a park under way when JFR starts is not recorded
        event?.begin()
        val keepAlive = if (worker.isExtra) pool.keepAliveNanos else Long.MAX_VALUE
        when (pool.idle.parkWhileIdle(worker.idleNode, keepAlive, pool, hasOwnWork, nanosToOwnDeadline)) {
            IdleControl.PARK_CLAIMED_BEFORE -> return true
            IdleControl.PARK_RETIRED -> {
                worker.counters.countPark()
                worker.markRetired()
                return false
            }
        }
        worker.counters.countPark()
        worker.counters.countWakeup()
        if (event != null && event.shouldCommit()) {
            event.pool = pool.name
            event.worker = worker.index
            event.commit()
        }
        return true
    }
}
