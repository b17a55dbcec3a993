package dev.stealing.internal.idle

// Read-only views of idle control: consistent snapshots for quiescence, and racy counts for
// stats and the starvation monitor. Nothing here changes ctl or a node.

/**
 * Whether [liveWorkers] workers (every live one) are idle on the stack, none is active and
 * none searching, and [nothingQueued] holds, from a consistent snapshot: the stack is walked
 * and the queues checked between two reads of ctl that must be equal (pushes and pops bump
 * the version; a wake in place and its re-idling bump it too).
 */
internal fun IdleControl.allIdle(liveWorkers: Int, nothingQueued: () -> Boolean): Boolean {
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
internal fun IdleControl.noneActive(): Boolean = Ctl.active(ctl()) == 0

/** Number of IDLE workers on the stack (racy; for stats). */
internal fun IdleControl.idleCount(): Int = idleOnStack(ctl())

/** Counts IDLE nodes from the top recorded in [c]; bounded even if links change meanwhile. */
private fun IdleControl.idleOnStack(c: Long): Int {
    var n = 0
    var steps = 0
    var top = Ctl.top(c)
    while (top != 0 && steps <= Ctl.MAX_THREADS) {
        steps++
        val node = host.idleNode(top - 1)
        if (node.parkState() == ParkState.IDLE) n++
        top = node.nextIdle
    }
    return n
}
