package dev.stealing.internal.pool

import dev.stealing.ForkedTask
import dev.stealing.internal.join.ForkHalf
import dev.stealing.internal.timer.Timer
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.cancel
import java.util.concurrent.CancellationException
import java.util.concurrent.RejectedExecutionException
import kotlin.coroutines.CoroutineContext

/**
 * A coroutine task that cannot be queued because its pool is shut down: cancel its job and run
 * it on [Dispatchers.IO] so the coroutine completes (with cancellation), exactly as kotlinx's
 * executor dispatchers handle a [RejectedExecutionException].
 */
internal fun rejectContinuation(
    context: CoroutineContext,
    block: Runnable,
    why: String = "The task was rejected: the StealingDispatcher is closed",
) {
    context.cancel(CancellationException(why))
    Dispatchers.IO.dispatch(context, block)
}

/**
 * Ends a queued [task] that will never run because [why]: a [ForkedTask] or a [DelayedTask] is
 * cancelled (so its joiners end), a coroutine continuation has its job cancelled and completes
 * on `Dispatchers.IO` (as kotlinx's executor dispatchers do on rejection), a coroutine timer is
 * abandoned ([Timer.abandon]), a `forkJoin` half is dropped (its caller, which is still running
 * or has a continuation of its own, takes it back). Returns false, doing nothing, for any other
 * `Runnable`: the caller hands it back, reports it or drops it.
 */
internal fun discard(task: Runnable, why: String): Boolean = when (task) {
    is ForkedTask<*> -> {
        task.cancel(false)
        true
    }
    is kotlin.coroutines.Continuation<*> -> {
        rejectContinuation(task.context, task, why)
        true
    }
    is Timer -> { // a due timer, queued to fire: a Java task is cancelled (and handed back)
        task.abandon(why)
        true
    }
    // Its caller takes it back (ForkJoin.kt): it is still unclaimed, or a dead entry.
    is ForkHalf<*> -> true
    else -> false
}
