package dev.stealing.internal.idle

import dev.stealing.internal.jvm.fieldHandle
import java.lang.invoke.VarHandle

/**
 * One worker's idle and block state, as [IdleControl] sees it: its park state, its block
 * state, whether it counts as searching, its link in the idle stack and its blocking depth.
 * Only [IdleControl] writes these fields; the worker loop, the pool and the starvation monitor
 * only read them.
 *
 * @property index the worker's slot, also its identity in the idle stack (stored as index + 1).
 * @property thread the thread to unpark when this node is woken.
 */
internal class IdleNode(@JvmField val index: Int, @JvmField val thread: Thread) {
    /**
     * A [ParkState]; through [PARK_STATE]. Set to IDLE by the node's own worker before the node
     * becomes reachable from the stack; moved out of IDLE by whoever claims the popped node, or
     * by the worker itself ([IdleControl.wakeSelf], [IdleControl.tryRetire]).
     */
    @Suppress("unused") private var parkState = ParkState.RUNNING

    fun parkState(): Int = PARK_STATE.getVolatile(this) as Int
    internal fun setParkState(state: Int) = PARK_STATE.setVolatile(this, state)
    internal fun casParkState(expected: Int, state: Int): Boolean = PARK_STATE.compareAndSet(this, expected, state)

    /**
     * A [BlockState]. Written by the node's own worker, and by the starvation monitor only with
     * a CAS from NOT_BLOCKED to PRESUMED (transition table in docs/parking.md).
     */
    @Volatile @JvmField internal var blockState = BlockState.NOT_BLOCKED

    internal fun casBlockState(expected: Int, state: Int): Boolean = BLOCK_STATE.compareAndSet(this, expected, state)
    internal fun swapBlockState(state: Int): Int = BLOCK_STATE.getAndSet(this, state) as Int

    /**
     * Own worker only: this worker is counted in the searching count of ctl. A worker starts as
     * a searcher: whoever starts it counts it so.
     */
    @JvmField internal var searching = true

    /**
     * The idle-stack link: index + 1 of the node below this one, 0 for none. Written by the own
     * worker before the CAS that pushes the node (which publishes it); read racily by poppers,
     * whose versioned CAS fails if the value was stale.
     */
    @JvmField internal var nextIdle = 0

    /**
     * Own worker only: nesting depth of blocking regions; only the outermost one is counted.
     * Non-zero exactly while the block state is MARKED (set after the uncount, cleared with the
     * recount), so a region left open by an Error is seen at the end of the worker's top-level
     * task ([IdleControl.closeLeakedRegion]).
     */
    @JvmField internal var blockingDepth = 0

    /**
     * A [PendingPop]: the step a popper of this node left undone because an Error cut it short
     * after its CAS on ctl ([IdleControl.finishPop]). Written by that popper in its catch, with a
     * plain store (no call, which could overflow the stack again); taken by a completer's swap
     * (`IdleRepair.kt`). At most one popper owns a popped node, so the store has no rival.
     */
    @Volatile @JvmField internal var pendingPop = PendingPop.NONE

    internal fun takePendingPop(): Int = PENDING_POP.getAndSet(this, PendingPop.NONE) as Int

    private companion object {
        val PARK_STATE: VarHandle = fieldHandle(IdleNode::class.java, "parkState", Int::class.javaPrimitiveType!!)
        val BLOCK_STATE: VarHandle = fieldHandle(IdleNode::class.java, "blockState", Int::class.javaPrimitiveType!!)
        val PENDING_POP: VarHandle = fieldHandle(IdleNode::class.java, "pendingPop", Int::class.javaPrimitiveType!!)
    }
}

/**
 * Where a worker is with respect to the idle stack ([IdleNode.parkState]).
 *
 * - RUNNING: not on the stack (or popped and claimed).
 * - IDLE: on the stack, parked or about to park; a popper claims it with a CAS to RUNNING.
 * - RUNNING_ON_STACK: woke itself while still linked; the node is stale, and the next popper
 *   unlinks it without waking anyone (and undoes the counts it added).
 * - RETIRED_ON_STACK: an extra worker whose keep-alive ran out while linked; the next popper
 *   unlinks it and moves it to RETIRED.
 * - RETIRED: gone and unlinked; its slot may be reused.
 */
internal object ParkState {
    const val RUNNING = 0
    const val IDLE = 1
    const val RUNNING_ON_STACK = 2
    const val RETIRED_ON_STACK = 3
    const val RETIRED = 4
}

/**
 * What is left of a pop that an Error cut short after its CAS on ctl ([IdleNode.pendingPop]).
 *
 * - NONE: nothing.
 * - CLAIM: the node is popped and counted, not yet claimed: claim it, then unpark its worker or
 *   (stale or retired node) undo the count.
 * - UNPARK: the node is claimed (RUNNING): unpark its worker.
 * - UNDO: the node was stale or retired: undo the count the pop added.
 */
internal object PendingPop {
    const val NONE = 0
    const val CLAIM = 1
    const val UNPARK = 2
    const val UNDO = 3
}

/**
 * Whether a worker counts as active in ctl, and why not ([IdleNode.blockState]).
 *
 * - NOT_BLOCKED: running or searching, counted as active.
 * - MARKED: inside a blocking region (`blocking { }`, a blocking join); not counted.
 * - PRESUMED: the starvation monitor found it stuck in a task and uncounted it; the worker
 *   counts itself again when that task ends.
 * - INACTIVE: idle or exiting, not counted, so the monitor's CAS from NOT_BLOCKED cannot uncount
 *   it a second time.
 */
internal object BlockState {
    const val NOT_BLOCKED = 0
    const val MARKED = 1
    const val PRESUMED = 2
    const val INACTIVE = 3

    /** Inside a blocking region or presumed blocked: in a task, but not going on with it soon. */
    fun isBlocked(state: Int): Boolean = state == MARKED || state == PRESUMED
}
