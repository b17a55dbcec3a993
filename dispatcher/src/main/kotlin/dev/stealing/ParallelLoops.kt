@file:JvmName("ParallelLoops")
@file:OptIn(InternalCoroutinesApi::class) // Job.invokeOnCompletion(onCancelling = true): stops a loop when its caller is cancelled

package dev.stealing

import dev.stealing.internal.loops.CancellableLoop
import dev.stealing.internal.loops.DoubleMergeSort
import dev.stealing.internal.loops.IntMergeSort
import dev.stealing.internal.loops.LongMergeSort
import dev.stealing.internal.loops.ObjectMergeSort
import dev.stealing.internal.loops.RangeLoop
import dev.stealing.internal.worker.Worker
import dev.stealing.internal.worker.WorkerHost
import kotlinx.coroutines.InternalCoroutinesApi
import kotlinx.coroutines.Job
import kotlinx.coroutines.ensureActive
import kotlinx.coroutines.withContext
import kotlinx.coroutines.yield
import kotlin.coroutines.ContinuationInterceptor
import kotlin.coroutines.CoroutineContext
import kotlin.coroutines.coroutineContext

// Where every loop and sort below runs (the "Where it runs" paragraph of each KDoc):
// - the caller's dispatcher is a StealingDispatcher (or StealingDispatcher itself, the shared
//   pool) and the caller runs on one of its workers: the loop runs right there, on the caller's
//   thread, and its pieces are split onto that worker's deque for the pool's other workers;
// - the caller runs on a worker of a pool but its dispatcher is not the pool itself (an
//   affinity dispatcher, a fair queue, a limitedParallelism view, runBlocking on a worker): the
//   whole loop runs in the caller, sequentially, so the view's confinement or limit holds;
// - anywhere else: the loop runs on the caller's StealingDispatcher if it has one, otherwise on
//   the shared pool, and the caller suspends until it ends.

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
    runRangeLoop(
        first, last,
        object : RangeLoop() {
            override fun runBlock(acc: Any?, from: Int, count: Int): Any? {
                val end = from + count
                for (i in from until end) action(i)
                return null
            }

            override fun runLastIndex(acc: Any?): Any? {
                action(Int.MAX_VALUE)
                return null
            }
        },
    )
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
    runRangeLoop(
        0, items.size - 1,
        object : RangeLoop() {
            override fun runBlock(acc: Any?, from: Int, count: Int): Any? {
                val end = from + count
                for (i in from until end) out[i] = transform(items[i])
                return null
            }
        },
    )
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
    val result = runRangeLoop(
        first, last,
        object : RangeLoop() {
            override fun newAccumulator(): Any? = initial()

            // R is reified so that an accumulator of Long, Int or Double stays a primitive across
            // a block: a loop-carried boxed value costs an allocation per index, which the JIT
            // cannot remove (the sum of squares ran 7 x slower than a plain loop that way).
            private val primitive = when {
                null is R -> 0
                R::class == Long::class -> 1
                R::class == Int::class -> 2
                R::class == Double::class -> 3
                else -> 0
            }

            // The loops run `i` from `from` until `end` (not `from + k` for k below `count`): the
            // JIT compiles that form 10-20% faster (docs/loops.md, "The block loop").
            @Suppress("UNCHECKED_CAST")
            override fun runBlock(acc: Any?, from: Int, count: Int): Any? {
                val end = from + count
                when (primitive) {
                    1 -> {
                        var r = acc as Long
                        for (i in from until end) r = operation(r as R, i) as Long
                        return r
                    }
                    2 -> {
                        var r = acc as Int
                        for (i in from until end) r = operation(r as R, i) as Int
                        return r
                    }
                    3 -> {
                        var r = acc as Double
                        for (i in from until end) r = operation(r as R, i) as Double
                        return r
                    }
                }
                var r = acc as R
                for (i in from until end) r = operation(r, i)
                return r
            }

            @Suppress("UNCHECKED_CAST")
            override fun runLastIndex(acc: Any?): Any? = operation(acc as R, Int.MAX_VALUE)

            @Suppress("UNCHECKED_CAST")
            override fun combine(left: Any?, right: Any?): Any? = combine(left as R, right as R)
        },
    )
    @Suppress("UNCHECKED_CAST")
    return result as R
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
    val sort = IntMergeSort(this)
    runLoop(sort) { pool -> sort.sortAll(pool) }
}

/** Sorts this array in ascending order, in parallel on a [StealingDispatcher]; see [IntArray.parallelSort]. */
public suspend fun LongArray.parallelSort() {
    if (size < 2) return
    val sort = LongMergeSort(this)
    runLoop(sort) { pool -> sort.sortAll(pool) }
}

/**
 * Sorts this array in ascending order, in parallel on a [StealingDispatcher], in the order of
 * `java.util.Arrays.sort(double[])` and `Double.compare`: -0.0 before 0.0, and every NaN after
 * positive infinity. See [IntArray.parallelSort].
 */
public suspend fun DoubleArray.parallelSort() {
    if (size < 2) return
    val sort = DoubleMergeSort(this)
    runLoop(sort) { pool -> sort.sortAll(pool) }
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
    val sort = ObjectMergeSort(this, comparator)
    runLoop(sort) { pool -> sort.sortAll(pool) }
}

/** Runs [loop] over `first..last` (see [runLoop]); its accumulator. For the inline loops above. */
@PublishedApi
internal suspend fun runRangeLoop(first: Int, last: Int, loop: RangeLoop): Any? =
    runLoop(loop) { pool -> loop.runAll(pool, first.toLong(), last.toLong() + 1) }

/**
 * Runs [loop] where the comment at the top of this file says: [run] runs it on this thread,
 * given the pool whose workers may split it (null: sequentially, in the caller). The caller's
 * cancellation cancels it; a cancelled caller gets its `CancellationException`.
 */
private suspend fun <T> runLoop(loop: CancellableLoop, run: (WorkerHost?) -> T): T {
    val context = coroutineContext
    context.ensureActive()
    val target = stealingDispatcherOf(context)
    val here = Thread.currentThread() as? Worker
    when {
        target != null && here != null && here.pool === target.pool -> Unit // on the pool: run here
        target == null && here != null -> Unit // a view of a pool, on its worker: sequentially here
        target != null -> { // a coroutine of the pool running off it (started undispatched): move onto it
            yield()
            return runLoop(loop, run)
        }
        else -> return withContext(StealingDispatcher.shared) { runLoop(loop, run) }
    }
    val handle = context[Job]?.invokeOnCompletion(onCancelling = true) { loop.cancel() }
    val result = try {
        run(target?.pool)
    } finally {
        handle?.dispose()
    }
    context.ensureActive()
    return result
}

/** The [StealingDispatcher] the caller's dispatcher is, if it is one (not a view of one). */
private fun stealingDispatcherOf(context: CoroutineContext): StealingDispatcher? =
    when (val i = context[ContinuationInterceptor]) {
        is StealingDispatcher -> i
        StealingDispatcher -> StealingDispatcher.shared
        else -> null
    }
