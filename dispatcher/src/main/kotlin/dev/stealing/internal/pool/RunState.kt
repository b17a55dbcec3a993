package dev.stealing.internal.pool

/**
 * The pool's life cycle ([PoolLifecycle.runState]), in order; it only moves forward.
 *
 * - RUNNING: takes work.
 * - SHUTDOWN ([shutdown]): intake closed. The global and fair queues are closed, so an outside
 *   submission either got in before and will run, or is rejected; running tasks may still fork
 *   locally. Workers keep running everything queued.
 * - STOP ([stop], `shutdownNow`): queued tasks are handed back or discarded; workers exit after
 *   their current task.
 * - TIDYING: quiescent after SHUTDOWN (every live worker idle and nothing queued, found by the
 *   last worker to go idle in [tryQuiesce]); workers exit.
 * - TERMINATED: no worker is alive.
 */
internal object RunState {
    const val RUNNING = 0
    const val SHUTDOWN = 1
    const val STOP = 2
    const val TIDYING = 3
    const val TERMINATED = 4
}
