package dev.stealing.internal.worker

import dev.stealing.internal.idle.FaultStep
import dev.stealing.internal.idle.IdleControl
import dev.stealing.internal.idle.faultAt
import dev.stealing.internal.idle.finishLeftPops
import dev.stealing.internal.idle.parkWhileIdle
import dev.stealing.internal.jvm.ParkEvent
import dev.stealing.internal.jvm.StackHeadroom
import dev.stealing.internal.jvm.jfrStarted

/**
 * A worker going idle and being woken, over the pool's [IdleControl] (push idle, fence,
 * re-scan, park: docs/parking.md). Owned by its [worker]'s thread.
 */
internal class WorkerParking(private val worker: Worker) {
    private val pool = worker.pool

    /**
     * For [IdleControl.parkWhileIdle]: work only this worker takes has arrived (keyed work, or
     * one of its timers is due, offered ones taken in first), or a look of this transition
     * failed ([look]). Allocated once.
     */
    private val hasOwnWork: () -> Boolean = {
        look(FaultStep.OWN_WORK) {
            worker.keyedQueue?.hasWork() == true || worker.timers?.let { heap ->
                heap.takeOffers()
                heap.isDue(System.nanoTime())
            } == true
        }
    }

    /**
     * For [IdleControl.parkWhileIdle], called after the IDLE write and its fence: nanoseconds
     * until its earliest timer is due, or Long.MAX_VALUE. Publishes that deadline for offerers
     * first (`TimerHeap.publishParkDeadline`: an offer of an earlier timer then unparks this
     * worker). 0 if that failed: the Error is held ([look]), and the next [hasOwnWork] says
     * true.
     */
    private val nanosToOwnDeadline: () -> Long = {
        try {
            val e = worker.timers?.publishParkDeadline()
            if (e == null) Long.MAX_VALUE else e.deadline - System.nanoTime()
        } catch (e: Throwable) {
            if (heldError == null) heldError = e
            0L
        }
    }

    /**
     * Owner only: an Error that a look inside the current idle transition threw ([look]), held
     * until the transition has ended with this worker running again and counted;
     * then [afterTransition] throws it into the worker's loop, which reports it
     * (`Worker.recoverFromLoopError`).
     */
    private var heldError: Throwable? = null

    /**
     * Before going idle: drops the references the own queues still hold to tasks thieves took
     * (`WorkDeque.clearTakenIfEmpty`), so an idle worker keeps no finished task alive.
     */
    private fun releaseTaken() {
        worker.deque.clearTakenIfEmpty()
        worker.yields.clearTakenIfEmpty()
    }

    /**
     * Owner only: true from the start of an idle push until the worker runs again. No Error
     * escapes such a transition ([parkIdle]); if one does anyway (a broken invariant), the
     * worker's idle state is half changed, `Worker.run` does not try to repair it and the worker
     * exits; left true then.
     */
    var inIdleTransition = false
        private set

    /**
     * Goes idle: push on the idle stack, re-scan, park until woken. Returns false when the pool
     * is stopping or this worker retired, and it should exit.
     *
     * An idle transition changes ctl and the node in steps ([IdleControl.pushIdle], then
     * [IdleControl.wakeSelf] or a claim by a waker), and an Error between two of them would leave
     * the node on the stack while its worker runs, or a count for nobody (docs/parking.md,
     * "Errors in the signalling path"). So nothing in it may throw: the stack it needs is
     * reserved before it starts, and every step that can throw for another reason (a look at
     * the queues or the timers, which may allocate, the quiescence check, which takes the
     * pool's lock, the JFR record) is a [look] whose Error counts as work seen: the worker
     * wakes itself, as after any re-scan that found work, and throws the Error once it runs again.
     */
    fun parkIdle(): Boolean {
        if (pool.isStopping()) return false
        releaseTaken()
        pool.idle.finishLeftPops() // steps of another thread's wake-up that an Error cut short, if any (one volatile read)
        StackHeadroom.reserve(IDLE_TRANSITION_FRAMES)
        inIdleTransition = true
        val awake = pushIdleAndPark()
        inIdleTransition = false
        return afterTransition(awake)
    }

    /**
     * An extra worker with empty queues while the pool has more active workers than it needs:
     * goes idle without a re-scan ([IdleControl.tryPushSurplus]) and parks for its keep-alive.
     * Null if the pool has no surplus (nothing changed); else as [parkIdle].
     */
    fun parkSurplus(): Boolean? {
        StackHeadroom.reserve(IDLE_TRANSITION_FRAMES)
        inIdleTransition = true
        if (!pool.idle.tryPushSurplus(worker.idleNode)) {
            inIdleTransition = false
            return null
        }
        releaseTaken() // its queues are empty; only it writes their slots
        val awake = if (pool.isShutdown() && look(FaultStep.QUIESCE) { pool.tryQuiesce(); false }) { // it may be the last worker to go idle
            pool.idle.wakeSelf(worker.idleNode)
            true
        } else {
            awaitWakeUp()
        }
        inIdleTransition = false
        return afterTransition(awake)
    }

    /**
     * Inside an idle transition: its [step], [block] (true if it saw work), where an Error counts as work
     * seen and is held for [afterTransition]. Also true while an Error is held, so a later look
     * of the same transition wakes the worker too. Inline: a call to it would be one more step
     * an overflow could stop.
     */
    private inline fun look(step: Int, block: () -> Boolean): Boolean = try {
        pool.idle.faultAt(step)
        heldError != null || block()
    } catch (e: Throwable) {
        if (heldError == null) heldError = e
        true
    }

    /** After an idle transition: [awake], or the Error a look held, thrown now that the worker runs counted; reported if it exits. */
    private fun afterTransition(awake: Boolean): Boolean {
        val e = heldError ?: return awake
        heldError = null
        if (awake) throw e
        worker.reportLoopError(e)
        return false
    }

    private fun pushIdleAndPark(): Boolean {
        val node = worker.idleNode
        pool.idle.pushIdle(node)
        // Re-scan after the fenced push (see IdleControl): any work published before a
        // producer read ctl without seeing this worker idle is visible here.
        if (look(FaultStep.RESCAN) { pool.hasVisibleWork() } || hasOwnWork() ||
            // after close(): the last worker to go idle ends the pool
            pool.isShutdown() && look(FaultStep.QUIESCE) { pool.tryQuiesce(); false }
        ) {
            pool.idle.wakeSelf(node)
            return true
        }
        return awaitWakeUp()
    }

    /**
     * Parks while this worker is idle ([IdleControl.parkWhileIdle]: a core worker until woken
     * or until its earliest timer is due, an extra one for its keep-alive, then it retires),
     * counting the park.
     * Returns false if it retired.
     */
    private fun awaitWakeUp(): Boolean {
        val event = if (jfrStarted()) newParkEvent() else null // a park under way when JFR starts is not recorded
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
        if (event != null) commit(event)
        return true
    }

    /** A record of this park, begun; null if it could not be made (only the record is lost). */
    private fun newParkEvent(): ParkEvent? = try {
        ParkEvent().also { it.begin() }
    } catch (_: Throwable) {
        null
    }

    private fun commit(event: ParkEvent) {
        try {
            if (event.shouldCommit()) {
                event.pool = pool.name
                event.worker = worker.index
                event.commit()
            }
        } catch (_: Throwable) { // only the record is lost
        }
    }

    private companion object {
        /**
         * Stack reserved before an idle transition (calls, about 0.8 ns each): several times its
         * deepest path outside a [look] (the park, or a wake-up that tells the monitor), a dozen
         * calls. Inside a look an overflow is caught like any Error.
         */
        const val IDLE_TRANSITION_FRAMES = 64
    }
}
