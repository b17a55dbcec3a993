package dev.stealing.internal.idle

// Blocking transitions of idle control: a worker leaves the active count while it blocks
// (a marked region, or presumed by the starvation monitor) and rejoins it afterwards. The block
// states and their transitions are in BlockState and in docs/parking.md ("Block states").
//
// Errors: each transition changes ctl with one atomic call and writes the node with plain stores
// after it, which cannot fail. An Error in the call itself (a deep caller's StackOverflowError)
// leaves both as they were; an Error after it leaves a consistent state, at worst a region still
// open, which closeLeakedRegion closes when the worker's top-level task ends.

/**
 * [node]'s worker enters a blocking region (nested regions count once): it stops counting
 * as active, and if work is waiting, another worker is woken or started in its place. If
 * the starvation monitor already presumed it blocked, it is already uncounted and the region
 * takes the presumption over.
 */
internal fun IdleControl.enterBlocking(node: IdleNode) {
    if (node.blockingDepth > 0) {
        node.blockingDepth++
        return
    }
    if (node.casBlockState(BlockState.NOT_BLOCKED, BlockState.MARKED)) {
        try {
            addCtl(-Ctl.ACTIVE_ONE)
        } catch (e: Throwable) { // the add did not happen: not entered
            node.blockState = BlockState.NOT_BLOCKED
            throw e
        }
        node.blockingDepth = 1 // entered: a failure of the compensation below leaves it open (closeLeakedRegion)
        compensateUncounted()
    } else {
        node.blockState = BlockState.MARKED // was PRESUMED: already uncounted
        node.blockingDepth = 1
    }
}

/** [node]'s worker leaves its (outermost) blocking region: it counts as active again. */
internal fun IdleControl.exitBlocking(node: IdleNode) {
    if (node.blockingDepth > 1) {
        node.blockingDepth--
        return
    }
    // The count first, then the state: the count is briefly one too high, never too low (a
    // presumption that saw NOT_BLOCKED first would uncount a worker not yet counted again).
    addCtl(Ctl.ACTIVE_ONE)
    node.blockingDepth = 0
    node.blockState = BlockState.NOT_BLOCKED
    host.workerActivated()
}

/**
 * At the end of [node]'s worker's top-level task: a blocking region an Error left open (its
 * entry's compensation or its exit failed, so the region's `finally` did not close it) is closed
 * here, on the worker's own shallow stack. One plain read otherwise.
 */
@Suppress("NOTHING_TO_INLINE")
internal inline fun IdleControl.closeLeakedRegion(node: IdleNode) {
    if (node.blockingDepth != 0) {
        node.blockingDepth = 1
        exitBlocking(node)
    }
}

/**
 * The starvation monitor found [node]'s worker stuck in a task while work waits: uncount it
 * and compensate. False if the worker is not NOT_BLOCKED any more (it marked a region,
 * went idle or exited meanwhile).
 */
internal fun IdleControl.presumeBlocked(node: IdleNode): Boolean {
    if (!node.casBlockState(BlockState.NOT_BLOCKED, BlockState.PRESUMED)) return false
    addCtl(-Ctl.ACTIVE_ONE)
    compensateUncounted()
    return true
}

/**
 * After each task of [node]'s worker: the task is over, so it no longer blocks; if the
 * monitor presumed it did (the presumption may also have landed just after the task ended:
 * either way the worker is running), count it as active again. One volatile read otherwise.
 */
internal fun IdleControl.endPresumptionIfAny(node: IdleNode) {
    if (node.blockState == BlockState.PRESUMED && node.blockingDepth == 0) {
        addCtl(Ctl.ACTIVE_ONE) // first, as in exitBlocking
        node.blockState = BlockState.NOT_BLOCKED // only the own worker moves it out of PRESUMED
        host.workerActivated()
    }
}
