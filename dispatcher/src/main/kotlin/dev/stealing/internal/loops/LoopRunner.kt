package dev.stealing.internal.loops

import dev.stealing.internal.join.JoinableTask
import dev.stealing.internal.pool.WorkStealingPool
import dev.stealing.internal.pool.label
import java.util.concurrent.Callable
import java.util.concurrent.CancellationException
import java.util.concurrent.RejectedExecutionException

/** A running loop or sort that its caller's cancellation stops (at its next block or leaf). */
internal interface CancellableLoop {
    fun cancel()
}

/**
 * The blocking form (Java's `parallelFor` and `parallelSort`): [run] on the calling thread if it
 * is a worker of [pool] (its pieces split onto that worker's deque); from any other thread, [run]
 * as a task of [pool] while the caller waits, not interruptibly (as `ForkJoinTask.invoke`: an
 * interrupt is kept for later). A worker of another pool waits inside a blocking region of its
 * own pool ([JoinableTask.joinResult]).
 *
 * @throws RejectedExecutionException if [pool] is closed, or was shut down with `shutdownNow`
 *   before the loop started.
 */
internal fun <T> runBlockingOn(pool: WorkStealingPool, run: () -> T): T {
    if (pool.currentWorker() != null) return run()
    val root = JoinableTask(Callable(run))
    if (!pool.execute(root)) throw RejectedExecutionException("${pool.label()} is closed")
    try {
        @Suppress("UNCHECKED_CAST")
        return root.joinResult() as T
    } catch (e: CancellationException) {
        if (!root.wasCancelled()) throw e
        throw RejectedExecutionException("${pool.label()} was shut down before the loop ran", e)
    }
}
