package dev.stealing.internal.pool

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
