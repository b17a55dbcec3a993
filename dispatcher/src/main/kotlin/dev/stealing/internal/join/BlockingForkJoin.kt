package dev.stealing.internal.join

import dev.stealing.internal.worker.Worker
import java.util.concurrent.CompletionException

/**
 * The blocking fork/join of two halves on worker [w] of their pool, after rayon's `join`
 * (docs/inlining.md, "Blocking fork/join"): [half] (the right half) is pushed onto [w]'s deque
 * for the other workers, [left] runs at once on the caller's stack, then the caller takes
 * [half] back and runs it here too, with no claim and no `Future`, unless a worker took it
 * first; then the caller helps that worker and blocks until it is done. [both] combines the
 * results on the caller's thread.
 *
 * Taking it back: pop it if it is still the newest entry of the deque (no CAS: the deque hands
 * each entry to one taker); else ([left] pushed tasks above it, or `shutdownNow` took it from
 * the deque) claim it by CAS ([JoinHalf.takeBack]), which fails only if a thief claimed it.
 *
 * Failures: if [left] throws and [half] was taken back, [half] never runs; if [half] was
 * stolen, the caller still waits for its end. The exception thrown is [left]'s if it threw
 * (with [half]'s added as suppressed if both did), else [half]'s; a checked exception is wrapped
 * in [CompletionException], as `ForkedTask.join` does. The whole call counts as one level of
 * [w]'s nesting depth, which bounds how deep helping may stack other tasks.
 */
internal inline fun <A, B, R> forkJoinOnWorker(w: Worker, half: JoinHalf<B>, left: () -> A, both: (A, B) -> R): R {
    if (!w.pushFork(half)) { // the pool is stopping: both here, one after the other
        return try { both(left(), half.compute()) } catch (e: Exception) { throw unchecked(e) }
    }
    w.counters.countFork()
    w.enterNested()
    val a: A
    val b: B
    try {
        var leftValue: A? = null
        var leftFailure: Throwable? = null
        try {
            leftValue = left()
        } catch (e: Throwable) {
            leftFailure = e
        }
        if (half.takeBack(w.deque)) {
            w.counters.countForkInlined()
            if (leftFailure != null) throw unchecked(leftFailure)
            b = try { half.compute() } catch (e: Exception) { throw unchecked(e) }
        } else {
            if (!half.isDone()) {
                helpThief(w, Long.MAX_VALUE, { half.thief() }, { half.isDone() })
                if (!half.isDone()) {
                    w.counters.countBlockedJoin()
                    w.enterBlocking()
                    try {
                        half.awaitDone()
                    } finally {
                        w.exitBlocking()
                    }
                }
            }
            val rightFailure = half.failure()
            if (leftFailure != null) {
                if (rightFailure != null && rightFailure !== leftFailure) leftFailure.addSuppressed(rightFailure)
                throw unchecked(leftFailure)
            }
            if (rightFailure != null) throw unchecked(rightFailure)
            b = half.value()
        }
        @Suppress("UNCHECKED_CAST")
        a = leftValue as A
    } finally {
        w.exitNested()
    }
    return both(a, b)
}

/** [e] as it is if it is unchecked, else wrapped in [CompletionException] (as `ForkedTask.join`). */
internal fun unchecked(e: Throwable): Throwable =
    if (e is RuntimeException || e is Error) e else CompletionException(e)
