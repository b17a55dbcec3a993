package dev.stealing

import dev.stealing.internal.join.runQueuedCoroutine
import kotlinx.coroutines.Deferred

/**
 * Awaits this deferred value like [Deferred.await], but first tries *wait-inlining*: when the
 * caller runs on a worker of a [StealingDispatcher] whose deque still holds this deferred's
 * coroutine (its first dispatch or a later resumption, anywhere in the deque), that task is
 * removed and run right here. If the child completes without suspending, its value is returned
 * and the caller never suspends.
 *
 * In every other case (not on a worker, the child already running or stolen, the nesting depth
 * [StealingOptions.maxInlineDepth] reached) it is exactly [Deferred.await], with the same
 * cancellation and exception semantics. A child is never run twice: removal from the deque and
 * a thief's steal are mutually exclusive. A child cancelled before it started is resumed only
 * to observe its cancellation, as the dispatcher would.
 */
public suspend fun <T> Deferred<T>.awaitInline(): T {
    if (!isCompleted) runQueuedCoroutine(this)
    return await()
}
