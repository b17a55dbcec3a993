package dev.stealing.internal.pool

import dev.stealing.internal.queue.WorkDeque

/**
 * For `PoolLifecycle.stop`: steals every task of [queue] into [unstarted]. A steal that says
 * Retry lost a race or met the owner in the middle of a removal, which is brief: retried,
 * yielding after a while, for at most [STEAL_RETRY_NANOS] without a task. Longer than that the
 * deque was left hiding by an Error in a removal (its hiding count never went even again), and
 * every empty steal would say Retry for ever: what is left then is its owner's, which rejects
 * it when it exits (`TaskRejection.rejectLeftovers` pops, which does not look at the count).
 */
internal fun stealAll(queue: WorkDeque, unstarted: MutableList<Runnable>) {
    var retries = 0
    var retryingSince = 0L
    while (true) {
        val r = queue.steal()
        val task = r.taskOrNull
        if (task != null) {
            unstarted += task
            retries = 0
        } else if (r.isEmpty) {
            return
        } else if (++retries < 64) {
            Thread.onSpinWait()
        } else {
            if (retries == 64) retryingSince = System.nanoTime()
            if (System.nanoTime() - retryingSince > STEAL_RETRY_NANOS) return
            Thread.yield()
        }
    }
}

/** How long [stealAll] retries a deque whose steals say Retry without yielding a task: a second. */
private const val STEAL_RETRY_NANOS = 1_000_000_000L
