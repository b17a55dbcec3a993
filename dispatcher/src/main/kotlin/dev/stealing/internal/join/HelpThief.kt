package dev.stealing.internal.join

import dev.stealing.internal.worker.Worker

/**
 * A joiner on worker [w] whose task was stolen helps the thief: it steals back, from the deque
 * of the worker [thief] names (read again each time: it may be set late), tasks that the stolen
 * task forked there (they cannot be waiting for a frame of the joiner), and runs them nested,
 * within the nesting bound. Returns when [isDone], at [deadline] (a `nanoTime`; Long.MAX_VALUE
 * for none), at the nesting bound, or after [HELP_SPINS] spin-waits in a row without a task;
 * the joiner then blocks. Used by `ForkedTask`'s joins and by the blocking fork/join
 * ([forkJoinOnWorker]).
 */
internal inline fun helpThief(w: Worker, deadline: Long, thief: () -> Worker?, isDone: () -> Boolean) {
    var idleSpins = 0
    while (!isDone() && w.canNest() && (deadline == Long.MAX_VALUE || deadline - System.nanoTime() > 0)) {
        val t = thief()
        val task = if (t != null && t !== w && t.pool === w.pool) w.stealFrom(t, withYields = false).taskOrNull else null
        if (task != null) {
            w.counters.countHelped()
            w.runNested(task)
            idleSpins = 0
        } else {
            if (++idleSpins > HELP_SPINS) return
            Thread.onSpinWait()
        }
    }
}

/**
 * Spin-waits a joiner spends finding nothing to help with before it blocks (tens of
 * microseconds; docs/investigations/2026-11-24-spin-waits.md).
 */
internal const val HELP_SPINS = 2048
