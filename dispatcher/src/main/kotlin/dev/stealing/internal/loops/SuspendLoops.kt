@file:OptIn(InternalCoroutinesApi::class) // Job.invokeOnCompletion(onCancelling = true): stops a loop when its caller is cancelled

package dev.stealing.internal.loops

import dev.stealing.internal.pool.WorkStealingPool
import dev.stealing.internal.worker.Worker
import dev.stealing.internal.worker.WorkerHost
import kotlinx.coroutines.InternalCoroutinesApi
import kotlinx.coroutines.Job
import kotlinx.coroutines.ensureActive
import kotlinx.coroutines.withContext
import kotlinx.coroutines.yield
import kotlin.coroutines.CoroutineContext
import kotlin.coroutines.coroutineContext

// Where a suspend loop or sort runs (the "Where it runs" paragraph of the API's KDoc):
// - the caller's dispatcher is a StealingDispatcher (or StealingDispatcher itself, the shared
//   pool) and the caller runs on one of its workers: the loop runs right there, on the caller's
//   thread, and its pieces are split onto that worker's deque for the pool's other workers;
// - the caller runs on a worker of a pool but its dispatcher is not the pool itself (an
//   affinity dispatcher, a fair queue, a limitedParallelism view, runBlocking on a worker): the
//   whole loop runs in the caller, sequentially, so the view's confinement or limit holds;
// - anywhere else: the loop runs on the caller's StealingDispatcher if it has one, otherwise on
//   the shared pool, and the caller suspends until it ends.
// The API says which pool a context's dispatcher is (poolOf: null when it is not a
// StealingDispatcher itself) and hands over the shared pool's dispatcher (shared), so the
// engine need not know the API's dispatcher.

/** The suspend loops' [RangeLoop] over `first..last`; its accumulator (see [runSuspendLoop]). */
internal suspend fun runSuspendRangeLoop(
    poolOf: (CoroutineContext) -> WorkStealingPool?,
    shared: CoroutineContext,
    first: Int,
    last: Int,
    loop: RangeLoop,
): Any? = runSuspendLoop(poolOf, shared, loop) { pool -> loop.runAll(pool, first.toLong(), last.toLong() + 1) }

/** The suspend sorts: [sort] (see [runSuspendLoop]). */
internal suspend fun runSuspendSort(poolOf: (CoroutineContext) -> WorkStealingPool?, shared: CoroutineContext, sort: ParallelMergeSort) {
    runSuspendLoop(poolOf, shared, sort) { pool -> sort.sortAll(pool) }
}

/**
 * Runs [loop] where the comment at the top of this file says: [run] runs it on this thread,
 * given the pool whose workers may split it (null: sequentially, in the caller). The caller's
 * cancellation cancels it; a cancelled caller gets its `CancellationException`.
 */
private suspend fun <T> runSuspendLoop(
    poolOf: (CoroutineContext) -> WorkStealingPool?,
    shared: CoroutineContext,
    loop: CancellableLoop,
    run: (WorkerHost?) -> T,
): T {
    val context = coroutineContext
    context.ensureActive()
    val target = poolOf(context)
    val here = Thread.currentThread() as? Worker
    when {
        target != null && here != null && here.pool === target -> Unit // on the pool: run here
        target == null && here != null -> Unit // a view of a pool, on its worker: sequentially here
        target != null -> { // a coroutine of the pool running off it (started undispatched): move onto it
            yield()
            return runSuspendLoop(poolOf, shared, loop, run)
        }
        else -> return withContext(shared) { runSuspendLoop(poolOf, shared, loop, run) }
    }
    val handle = context[Job]?.invokeOnCompletion(onCancelling = true) { loop.cancel() }
    val result = try {
        run(target)
    } finally {
        handle?.dispose()
    }
    context.ensureActive()
    return result
}
