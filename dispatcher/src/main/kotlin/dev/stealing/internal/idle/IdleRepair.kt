package dev.stealing.internal.idle

import dev.stealing.internal.jvm.TestHooks
import dev.stealing.internal.jvm.fieldHandle
import java.lang.invoke.VarHandle

// A pop that an Error must not cut in half (finishPop), and finishing the steps of one that an
// Error cut short. The popper wrote what is left to the node (IdleNode.pendingPop) and set
// IdleControl.repairPending; a completer (the starvation monitor at each look, a worker about
// to go idle, wakeAll) finishes the step as the popper would have, later, and an Error in the
// completer leaves the step and the flag as it found them. A popper
// delayed between its CAS on ctl and its claim, its unpark or its undo is a case the protocol
// already allows (docs/parking.md, "Errors in the signalling path"), so finishing the step late
// is as correct as finishing it at once.

/**
 * After a CAS on ctl that popped [node] off the stack and counted it active and searching:
 * claims it and unparks its worker, or (a stale or retired node) undoes the count. True if it
 * woke the worker.
 *
 * An Error here (a `StackOverflowError` of a deep caller, an `OutOfMemoryError`) must not
 * leave the pop half done: a node popped but never unparked, or a count never undone, is
 * repaired by no later event, and a count left standing makes every later signal see a
 * searcher that does not exist and wake nobody. So the catch writes the step that is left to
 * the node with plain stores only (a call could overflow again) and sets [repairPending];
 * a completer finishes it ([finishLeftPops]: the starvation monitor, a worker about to go
 * idle, [IdleControl.wakeAll]). That is a popper delayed between two of its steps, which the
 * protocol already allows (docs/parking.md, "Errors in the signalling path").
 *
 * Inline, so that its `try` opens in the frame whose CAS popped the node: a call to it would be
 * a step of its own, and an overflow on entering it left a pop with no step written (the
 * ledger soak with an overflowing submitter hung so, a worker IDLE and unlinked under a count
 * for nobody).
 */
@Suppress("NOTHING_TO_INLINE")
internal inline fun IdleControl.finishPop(node: IdleNode): Boolean {
    var left = PendingPop.CLAIM
    try {
        faultAt(PendingPop.CLAIM)
        if (claimPopped(node)) {
            left = PendingPop.UNPARK
            faultAt(PendingPop.UNPARK)
            wake(node)
            left = PendingPop.NONE
            activated(node)
            return true
        }
        left = PendingPop.UNDO
        faultAt(PendingPop.UNDO)
        addCtl(-Ctl.ACTIVE_ONE - Ctl.SEARCHING_ONE)
        return false
    } catch (e: Throwable) {
        if (left != PendingPop.NONE) {
            node.pendingPop = left // plain stores, no call: they cannot fail
            repairPending = true
        }
        throw e
    }
}

/**
 * Finishes every step that a popper left undone, if any was left (one volatile read otherwise).
 *
 * Any thread may call it, also one deep in its stack or unwinding an Error of its own: an
 * outside submitter reaches it through `tryQuiesce` and [IdleControl.wakeAll] in the `finally`
 * of a keyed offer or a timer insert, where its pop may just have failed. So an Error in the
 * walk loses nothing: the flag, cleared before the walk, is set again in the catch (a plain
 * store), and a step taken off a node goes back to it ([finishLeftPop]). Before, an overflow
 * after the swap left the flag down with a claim still on a node, and a stopped pool waited
 * for a worker that nobody would wake (the ledger soak with an overflowing submitter hung so).
 */
internal fun IdleControl.finishLeftPops() {
    if (!repairPending) return
    // Cleared before the nodes are read: a popper writes its node, then the flag, so a step left
    // after this swap sets the flag again for the next completer.
    if (!(REPAIR_PENDING.getAndSet(this, false) as Boolean)) return
    try {
        host.forEachIdleNode { node -> finishLeftPop(node) }
    } catch (e: Throwable) {
        repairPending = true // the nodes not reached (and one whose step went back) wait for the next completer
        throw e
    }
}

/**
 * Takes the step left on [node], if any, and finishes it; if an Error cuts that short, what is
 * left of it goes back to the node and the flag is set, as a popper's catch leaves it. Inline,
 * so the take and the `try` are in one frame: entering a called function after the take is a
 * step an overflow can stop, and the step would be lost with it.
 */
@Suppress("NOTHING_TO_INLINE")
private inline fun IdleControl.finishLeftPop(node: IdleNode) {
    var left = PendingPop.NONE
    try {
        faultAt(FaultStep.REPAIR_WALK)
        left = node.takePendingPop() // the swap is the call's last act: an overflow entering it takes nothing
        faultAt(FaultStep.REPAIR_TAKEN)
        if (left == PendingPop.CLAIM) left = if (claimPopped(node)) PendingPop.UNPARK else PendingPop.UNDO
        if (left == PendingPop.UNPARK) {
            wake(node)
            left = PendingPop.NONE
            activated(node)
        } else if (left == PendingPop.UNDO) {
            addCtl(-Ctl.ACTIVE_ONE - Ctl.SEARCHING_ONE)
            left = PendingPop.NONE
        }
    } catch (e: Throwable) {
        if (left != PendingPop.NONE) {
            node.pendingPop = left
            repairPending = true
        }
        throw e
    }
}

private val REPAIR_PENDING: VarHandle = fieldHandle(IdleControl::class.java, "repairPending", Boolean::class.javaPrimitiveType!!)

/** Runs [IdleControl.faultHook] at [step] where test hooks are on; nothing (folded away by the JIT) elsewhere. */
@Suppress("NOTHING_TO_INLINE")
internal inline fun IdleControl.faultAt(step: Int) {
    if (TestHooks.ENABLED) faultHook?.accept(step)
}

/**
 * Steps at which [IdleControl.faultHook] is called besides the [PendingPop] steps of a pop
 * (tests only: a hook that throws there stands in for an Error at that step).
 */
internal object FaultStep {
    /** Before a counted start of a worker ([startWorkerOrUndo]). */
    const val START = 10

    /** In an idle transition: the re-scan of the queues after the idle push (`WorkerParking`). */
    const val RESCAN = 11

    /** In an idle transition: the look at a worker's own keyed work and timers (`WorkerParking`). */
    const val OWN_WORK = 12

    /** In an idle transition: the quiescence check of a shut-down pool (`WorkerParking`). */
    const val QUIESCE = 13

    /** In [finishLeftPops]' walk: before a node's left step is taken. */
    const val REPAIR_WALK = 14

    /** In [finishLeftPops]' walk: just after a node's left step was taken, before it is done. */
    const val REPAIR_TAKEN = 15
}
