package dev.stealing.internal.idle

import java.util.concurrent.locks.LockSupport

// A worker's park while it is idle, and an extra worker's retirement: the sleeper's side of the
// protocol of IdleControl (docs/parking.md). Same package, same state: these write the node's
// park state and ctl as IdleControl's own methods do.

/**
 * Parks the calling worker while [node] is IDLE, after [IdleControl.pushIdle] and a re-scan that found
 * nothing. It runs again when a producer claims the node, or when [hasOwnWork] says that
 * work only this worker may run has arrived (keyed work, or one of its own timers is due:
 * their producers unpark the worker without claiming it, so it wakes itself; pairs with the
 * fence and park-state read in offerKeyed(), and the CAS in TimerHeap.offer() and the park-
 * state read in insertTimer()). It parks no longer than [nanosToOwnDeadline] (its earliest
 * timer), read afresh before every park, after the IDLE write and fence of [IdleControl.pushIdle]. With
 * a finite [keepAliveNanos] an extra worker gives up after that long idle and retires ([tryRetire]).
 *
 * Returns [IdleControl.PARK_CLAIMED_BEFORE] if the node was claimed before it could park, [IdleControl.PARK_WOKEN]
 * after a park, [IdleControl.PARK_RETIRED] if the worker retired (it must exit; it is uncounted).
 */
internal fun IdleControl.parkWhileIdle(
    node: IdleNode,
    keepAliveNanos: Long,
    blocker: Any,
    hasOwnWork: () -> Boolean,
    nanosToOwnDeadline: () -> Long = IdleControl.NO_DEADLINE,
): Int {
    if (node.parkState() != ParkState.IDLE) { // claimed by a waker, who counted it
        resume(node)
        return IdleControl.PARK_CLAIMED_BEFORE
    }
    val timed = keepAliveNanos != Long.MAX_VALUE
    val retireAt = if (timed) System.nanoTime() + keepAliveNanos else 0L
    while (node.parkState() == ParkState.IDLE) {
        if (hasOwnWork()) {
            wakeSelf(node)
            return IdleControl.PARK_WOKEN
        }
        var limit = nanosToOwnDeadline()
        if (timed) {
            val left = retireAt - System.nanoTime()
            if (left <= 0 && tryRetire(node)) return IdleControl.PARK_RETIRED
            limit = minOf(limit, left)
        }
        if (limit == Long.MAX_VALUE) LockSupport.park(blocker) else if (limit > 0) LockSupport.parkNanos(blocker, limit)
        Thread.interrupted() // a stray interrupt must not turn park() into a spin
    }
    resume(node) // whoever claimed it counted it as active and searching
    return IdleControl.PARK_WOKEN
}

/**
 * An idle extra worker whose keep-alive ran out: leaves the pool if still IDLE (its node
 * stays linked as a tombstone until popped). False if it was woken meanwhile.
 */
private fun IdleControl.tryRetire(node: IdleNode): Boolean {
    if (!node.casParkState(ParkState.IDLE, ParkState.RETIRED_ON_STACK)) return false
    addCtl(-Ctl.LIVE_ONE)
    return true
}
