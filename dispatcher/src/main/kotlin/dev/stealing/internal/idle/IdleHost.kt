package dev.stealing.internal.idle

/**
 * What idle control needs from the pool above it, and nothing more.
 */
internal interface IdleHost {
    /** The node of the worker in slot [index] (a slot that the idle stack links to is filled). */
    fun idleNode(index: Int): IdleNode

    /** Calls [action] with the node of every started worker (a racy walk of the worker slots). */
    fun forEachIdleNode(action: (IdleNode) -> Unit)

    /** The re-scan: whether any queue holds work that any worker may take. */
    fun hasVisibleWork(): Boolean

    /**
     * Starts a worker that idle control has already counted as live, active and searching.
     * False if the pool no longer starts workers; throws if the thread cannot be started.
     */
    fun startWorker(): Boolean

    /**
     * A worker could not be started because of [cause] (already uncounted); [noneLive]: no
     * worker is alive, so nobody would run what is queued.
     */
    fun workerStartFailed(cause: Throwable, noneLive: Boolean)

    /** A worker became active: the starvation monitor must be watching. */
    fun workerActivated()
}
