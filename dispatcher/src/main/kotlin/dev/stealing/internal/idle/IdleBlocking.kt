package dev.stealing.internal.idle

// Blocking transitions of idle control: a worker leaves the active count while it blocks
// (a marked region, or presumed by the starvation monitor) and rejoins it afterwards. The block
// states and their transitions are in BlockState and in docs/parking.md ("Block states").

/**
 * [node]'s worker enters a blocking region (nested regions count once): it stops counting
 * as active, and if work is waiting, another worker is woken or started in its place. If
 * the starvation monitor already presumed it blocked, it is already uncounted and the region
 * takes the presumption over.
 */
internal fun IdleControl.enterBlocking(node: IdleNode) {
    if (node.blockingDepth++ > 0) return
    if (node.casBlockState(BlockState.NOT_BLOCKED, BlockState.MARKED)) {
        uncountBlocked()
    } else {
        node.blockState = BlockState.MARKED // was PRESUMED: already uncounted
    }
}

/** [node]'s worker leaves its (outermost) blocking region: it counts as active again. */
internal fun IdleControl.exitBlocking(node: IdleNode) {
    if (--node.blockingDepth > 0) return
    node.blockState = BlockState.NOT_BLOCKED
    countUnblocked()
}

/**
 * The starvation monitor found [node]'s worker stuck in a task while work waits: uncount it
 * and compensate. False if the worker is not NOT_BLOCKED any more (it marked a region,
 * went idle or exited meanwhile).
 */
internal fun IdleControl.presumeBlocked(node: IdleNode): Boolean {
    if (!node.casBlockState(BlockState.NOT_BLOCKED, BlockState.PRESUMED)) return false
    uncountBlocked()
    return true
}

/**
 * After each task of [node]'s worker: the task is over, so it no longer blocks; if the
 * monitor presumed it did (the presumption may also have landed just after the task ended:
 * either way the worker is running), count it as active again. One volatile read otherwise.
 */
internal fun IdleControl.endPresumptionIfAny(node: IdleNode) {
    if (node.blockState == BlockState.PRESUMED && node.blockingDepth == 0) {
        node.blockState = BlockState.NOT_BLOCKED // only the own worker moves it out of PRESUMED
        countUnblocked()
    }
}
