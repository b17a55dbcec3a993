package dev.stealing.internal.idle

// Starting a worker that idle control has counted, and undoing the count when the start fails.

/**
 * Starts a worker, already counted as live, active and searching. If the thread cannot be
 * started (no native threads left, or no free slot), the worker it was counted as never
 * exists: uncount it and tell the host instead of throwing into whoever signalled (a
 * submitter whose task was already accepted, or a worker's loop).
 *
 * A `StackOverflowError` is the caller's stack, not the system's threads: the count is undone
 * and the error goes on to the caller, and what is queued waits for the next signal or the
 * starvation monitor's look (rejecting it, as for a thread that cannot start, would fail other
 * submitters' tasks). The callers reserved stack before their count ([StackHeadroom]), and the
 * undo needs less than the start, which reserves again before it takes the pool's lock.
 */
internal fun IdleControl.startWorkerOrUndo(): Boolean {
    val started = try {
        faultAt(FaultStep.START)
        host.startWorker()
    } catch (e: Throwable) {
        addCtl(-Ctl.LIVE_ONE - Ctl.ACTIVE_ONE - Ctl.SEARCHING_ONE)
        if (e is StackOverflowError) throw e
        host.workerStartFailed(e, noneLive = Ctl.live(ctl()) == 0)
        return false
    }
    if (!started) {
        addCtl(-Ctl.LIVE_ONE - Ctl.ACTIVE_ONE - Ctl.SEARCHING_ONE) // pool quiesced meanwhile
        return false
    }
    host.workerActivated()
    return true
}
