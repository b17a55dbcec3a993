package dev.stealing.internal.pool

import dev.stealing.ForkedTask
import dev.stealing.internal.join.CallerOwnedHalf
import dev.stealing.internal.timer.Timer
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.cancel
import kotlinx.coroutines.CancellationException
import java.util.concurrent.RejectedExecutionException
import kotlin.coroutines.CoroutineContext

/** How every rejection message names a pool: `StealingDispatcher 'compute'`. */
internal fun WorkStealingPool.label(): String = "StealingDispatcher '$name'"

/**
 * A coroutine task that cannot be queued because [reason] (which names the pool, e.g.
 * `StealingDispatcher 'compute' is closed`): cancel its job and run it on [Dispatchers.IO] so
 * the coroutine completes (with cancellation), exactly as kotlinx's executor dispatchers handle
 * a [RejectedExecutionException]: the job's [CancellationException] says "The task was
 * rejected: [reason]" and its cause is a [RejectedExecutionException] with [reason].
 */
internal fun rejectContinuation(context: CoroutineContext, block: Runnable, reason: String) {
    context.cancel(rejection(reason))
    Dispatchers.IO.dispatch(context, block)
}

/** kotlinx's form of a rejection for a coroutine: a cancellation whose cause is the [RejectedExecutionException]. */
internal fun rejection(reason: String, what: String = "task"): CancellationException =
    CancellationException("The $what was rejected: $reason", RejectedExecutionException(reason))

/**
 * Ends a queued [task] that will never run because [reason] (naming the pool): a [ForkedTask] or a [DelayedTask] is
 * cancelled (so its joiners end), a coroutine continuation has its job cancelled and completes
 * on `Dispatchers.IO` (as kotlinx's executor dispatchers do on rejection), a coroutine timer is
 * abandoned ([Timer.abandon]), a fork/join half ([CallerOwnedHalf]) is dropped (its caller, which is still running
 * or has a continuation of its own, takes it back). Returns false, doing nothing, for any other
 * `Runnable`: the caller hands it back, reports it or drops it.
 */
internal fun discard(task: Runnable, reason: String): Boolean = when (task) {
    is ForkedTask<*> -> {
        task.cancel(false)
        true
    }
    is kotlin.coroutines.Continuation<*> -> {
        rejectContinuation(task.context, task, reason)
        true
    }
    is Timer -> { // a due timer, queued to fire: a Java task is cancelled (and handed back)
        task.abandon("The task was rejected: $reason")
        true
    }
    // Its caller takes it back: it is still unclaimed, or a dead entry.
    is CallerOwnedHalf -> true
    else -> false
}
