@file:JvmName("ParallelLoops")

package dev.stealing

import dev.stealing.internal.loops.DoubleMergeSort
import dev.stealing.internal.loops.IntMergeSort
import dev.stealing.internal.loops.LongMergeSort
import dev.stealing.internal.loops.ObjectMergeSort
import dev.stealing.internal.loops.ParallelMergeSort
import dev.stealing.internal.loops.RangeLoop
import dev.stealing.internal.loops.foldLoop
import dev.stealing.internal.loops.forEachLoop
import dev.stealing.internal.loops.mapLoop
import dev.stealing.internal.loops.runSuspendRangeLoop
import dev.stealing.internal.loops.runSuspendSort

// Where every loop and sort below runs is the "Where it runs" paragraph of parallelForEach's
// KDoc; the engine decides it (internal/loops/SuspendLoops.kt), told by poolOf which pool the
// caller's dispatcher is and given the shared pool, StealingDispatcher.Default, for callers
// that have none.

/**
 * Runs [action] for every index of this range, in parallel on a [StealingDispatcher], and returns
 * when every call has returned. The order of the calls is unspecified; each index runs exactly
 * once.
 *
 * ```kotlin
 * val hits = AtomicLongArray(buckets)
 * (0 until samples.size).parallelForEach { i -> hits.incrementAndGet(bucketOf(samples[i])) }
 * ```
 *
 * **No grain size to tune.** The range is split on demand (lazy binary splitting): a worker runs
 * its piece in blocks of at most 4,096 indices and, whenever its own queue is empty, offers the
 * upper half of what it has left to the other workers. On a pool whose other workers are busy
 * (or a pool of one) the loop costs about what a plain `for` loop costs; when workers are idle,
 * pieces are split and stolen until all are busy.
 *
 * **Where it runs.** Called from a coroutine on a worker of a `StealingDispatcher` (the caller's
 * dispatcher is that pool), it runs on that pool and the caller's thread takes part. Called from
 * an [affinity][StealingDispatcher.affinity] dispatcher, a [fair queue][StealingDispatcher.fairQueue]
 * or a `limitedParallelism` view of a pool, it runs sequentially in the caller, so the key's
 * confinement or the view's limit holds. Called anywhere else, it runs on the caller's
 * `StealingDispatcher` (or the shared pool, [StealingDispatcher.Default], if the caller has
 * none) and the caller suspends until it ends. [action] runs on pool threads, without the
 * caller's coroutine context or thread-locals (as in a parallel stream).
 *
 * **Failures.** If [action] throws, no new piece starts, running pieces stop at their next
 * block, and once every started piece has ended the first exception is thrown, with later ones
 * added to it as suppressed.
 *
 * **Cancellation.** Cancelling the caller stops the loop the same way: within one block of
 * [action] calls (at most 4,096) per running piece; this then throws the caller's
 * `CancellationException`.
 *
 * **Nesting.** [action] may run another loop (the Java form [StealingDispatcher.parallelFor], for
 * instance): it runs on the same pool, its pieces shared with the outer loop's.
 *
 * The counters are [StealingStats.loopPieces] and [StealingStats.loopSplits].
 */
public suspend inline fun IntRange.parallelForEach(crossinline action: (Int) -> Unit) {
    if (isEmpty()) return
    runRangeLoop(first, last, forEachLoop(action))
}

/**
 * Returns the results of [transform] applied to each element, in the order of this list,
 * computing them in parallel on a [StealingDispatcher]; each element is transformed exactly
 * once. Splitting, where it runs, failures, cancellation and nesting are as for
 * [parallelForEach]. A list that is not `RandomAccess` is copied first; the list must not change
 * while this runs.
 */
public suspend inline fun <T, R> List<T>.parallelMap(crossinline transform: (T) -> R): List<R> {
    if (isEmpty()) return emptyList()
    val items: List<T> = if (this is RandomAccess) this else ArrayList(this)
    val out = arrayOfNulls<Any?>(items.size)
    runRangeLoop(0, items.size - 1, mapLoop(items, out, transform))
    @Suppress("UNCHECKED_CAST")
    return out.asList() as List<R>
}

/**
 * Folds this range in parallel on a [StealingDispatcher]: each piece of the range starts from a
 * fresh [initial] value and applies [operation] to its indices in increasing order; the pieces'
 * results are then combined with [combine] in index order. So with an associative [combine],
 * even one that is not commutative (string concatenation, for instance), the result is that of
 * the sequential fold; [initial] must return an identity of [combine] (a new mutable object each
 * time, if the accumulator is mutable).
 *
 * ```kotlin
 * val sumOfSquares = (0 until n).parallelFold({ 0L }, { s, i -> s + i.toLong() * i }, Long::plus)
 * ```
 *
 * How many pieces there are depends on how many were stolen (see [parallelForEach]); an empty
 * range returns `initial()`. Where it runs, failures (of [initial], [operation] or [combine]),
 * cancellation and nesting are as for [parallelForEach].
 */
public suspend inline fun <reified R> IntRange.parallelFold(
    crossinline initial: () -> R,
    crossinline operation: (R, Int) -> R,
    crossinline combine: (R, R) -> R,
): R {
    if (isEmpty()) return initial()
    @Suppress("UNCHECKED_CAST")
    return runRangeLoop(first, last, foldLoop(initial, operation, combine)) as R
}

/**
 * Sorts this array in ascending order, in parallel on a [StealingDispatcher]: a merge sort whose
 * pieces (a power of two of them, at least one per worker, each sorted with
 * `java.util.Arrays.sort`) and merges run on every worker. It needs a buffer as long as the
 * array; an array of up to 8,192 elements, or a pool of one worker, is sorted in place with
 * `Arrays.sort`. Where it runs is as for
 * [parallelForEach]. If the caller is cancelled, pieces not yet sorted are skipped and this
 * throws `CancellationException` with the array holding its same elements in an unspecified
 * order.
 */
public suspend fun IntArray.parallelSort() {
    if (size < 2) return
    sortOnPool(IntMergeSort(this))
}

/** Sorts this array in ascending order, in parallel on a [StealingDispatcher]; see [IntArray.parallelSort]. */
public suspend fun LongArray.parallelSort() {
    if (size < 2) return
    sortOnPool(LongMergeSort(this))
}

/**
 * Sorts this array in ascending order, in parallel on a [StealingDispatcher], in the order of
 * `java.util.Arrays.sort(double[])` and `Double.compare`: -0.0 before 0.0, and every NaN after
 * positive infinity. See [IntArray.parallelSort].
 */
public suspend fun DoubleArray.parallelSort() {
    if (size < 2) return
    sortOnPool(DoubleMergeSort(this))
}

/**
 * Sorts this array in the order of [comparator], in parallel on a [StealingDispatcher]: the
 * parallel form of `sortWith`. The sort is **stable**: equal elements keep their order (the
 * pieces are sorted with `java.util.Arrays.sort`, a stable sort, and the merges take the earlier
 * element on a tie). Pieces, buffer, where it runs and cancellation are as for
 * [IntArray.parallelSort]. If [comparator] throws, no piece or merge starts after it (a piece
 * already being sorted on another worker runs to its end) and, once every started piece has
 * ended, the first exception is thrown (later ones suppressed into it); the array then holds an
 * unspecified arrangement, as after an `Arrays.sort` that failed.
 */
public suspend fun <T> Array<T>.parallelSortWith(comparator: Comparator<in T>) {
    if (size < 2) return
    sortOnPool(ObjectMergeSort(this, comparator))
}

/** Runs [loop] over `first..last` where the caller is (see the comment at the top); its accumulator. For the inline loops above. */
@PublishedApi
@JvmSynthetic // called by the inline functions compiled into their callers; Java does not see it
internal suspend fun runRangeLoop(first: Int, last: Int, loop: RangeLoop): Any? =
    runSuspendRangeLoop(::poolOf, StealingDispatcher, first, last, loop)

/** Runs [sort] where the caller is (see the comment at the top). */
private suspend fun sortOnPool(sort: ParallelMergeSort): Unit = runSuspendSort(::poolOf, StealingDispatcher, sort)
