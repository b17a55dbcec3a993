package dev.stealing.internal.join

import dev.stealing.internal.worker.Worker
import kotlinx.coroutines.Job

/**
 * The wait-inlining of `awaitInline` (docs/inlining.md): on a worker whose nesting depth allows
 * it and whose deque still holds a dispatch of the coroutine of [job] (its first dispatch or a
 * later resumption, anywhere in the deque), that task is removed and run here, one nesting level
 * deeper. Nothing happens anywhere else; the caller then awaits as usual. The removal and a
 * thief's steal exclude each other, so the coroutine never runs twice.
 */
internal fun runQueuedCoroutine(job: Job) {
    val w = Thread.currentThread() as? Worker
    if (w != null && w.canNest()) {
        val task = w.removeLocal(job, CoroutineOfJob)
        if (task != null) {
            w.counters.countInlined()
            w.runNested(task)
        }
    }
}
