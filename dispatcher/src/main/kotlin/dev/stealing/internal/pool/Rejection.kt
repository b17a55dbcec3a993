package dev.stealing.internal.pool

import dev.stealing.internal.join.CallerOwnedHalf
import dev.stealing.internal.join.JoinableTask
import dev.stealing.internal.timer.Timer
import dev.stealing.internal.worker.Worker
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.cancel
import kotlinx.coroutines.CancellationException
import java.util.concurrent.RejectedExecutionException
import java.util.concurrent.atomic.AtomicBoolean
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
 * Ends a queued [task] that will never run because [reason] (naming the pool): a forked task ([JoinableTask]) or a [DelayedTask] is
 * cancelled (so its joiners end), a coroutine continuation has its job cancelled and completes
 * on `Dispatchers.IO` (as kotlinx's executor dispatchers do on rejection), a coroutine timer is
 * abandoned ([Timer.abandon]), a fork/join half ([CallerOwnedHalf]) is dropped (its caller, which is still running
 * or has a continuation of its own, takes it back). Returns false, doing nothing, for any other
 * `Runnable`: the caller hands it back, reports it or drops it.
 */
internal fun discard(task: Runnable, reason: String): Boolean = when (task) {
    is JoinableTask -> {
        task.cancelTask(mayInterruptIfRunning = false)
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

/**
 * Ending the tasks that a stopped pool, or one that cannot start a worker, will never run: each is
 * [discard]ed or reported to the failure handler as rejected, and counted in
 * [WorkStealingPool.rejected]. Owned by the pool ([WorkStealingPool.rejection]).
 */
internal class TaskRejection(private val pool: WorkStealingPool) {
    /** Set while [rejectQueuedWithoutWorkers] drains. */
    private val rejectingStranded = AtomicBoolean()

    /**
     * When [w] exits a stopping pool, once `stop()` has taken what it hands back
     * ([PoolLifecycle.awaitStopHandBack]): tasks it pushed onto its own deque or yield queue after `stop()` took
     * their contents are rejected, not lost. Its keyed queue was closed and emptied by `stop()` (a
     * keyed offer racing that was refused to its producer, [WorkStealingPool.executeKeyed]), or
     * was empty at quiescence (TIDYING); it is closed and drained once more here all the same, so
     * that nothing accepted could be left in it. Its timer heap is closed and drained the same
     * way: a timer added before the close is abandoned here ([Timer.abandon]), a later one is
     * refused to its creator (`WorkStealingPool.addTimer`).
     */
    fun rejectLeftovers(w: Worker) {
        pool.lifecycle.awaitStopHandBack()
        while (true) rejectTask(w.deque.pop() ?: break)
        while (true) rejectTask(w.yields.pop() ?: break)
        w.keyedQueue?.drainClosed { rejectTask(it) }
        w.timers?.closeAndDrain { it.abandon("The timer was rejected: ${pool.label()} stopped") }
    }

    /**
     * A task that cannot run any more because the pool stopped (or, with [startFailure], because
     * no worker could be started): [discard]ed, and anything else reaches the failure handler with
     * a [RejectedExecutionException].
     */
    fun rejectTask(task: Runnable, startFailure: Throwable? = null) {
        pool.rejected.increment()
        val why = if (startFailure == null) "${pool.label()} stopped" else "${pool.label()} could not start a worker"
        if (!discard(task, why)) {
            pool.reportFailure(task, RejectedExecutionException("$why before running $task", startFailure))
        }
    }

    /**
     * A worker could not be started and none is alive: the tasks waiting in the global queue and
     * the fair queues would never run, so each is rejected ([rejectTask], with [cause]) instead of
     * being stranded. A later submission tries to start a worker again.
     */
    fun rejectQueuedWithoutWorkers(cause: Throwable) {
        // One drainer at a time: taking a fair queue's turn signals, and that signal's failed start
        // would call this again on the same thread. A caller that finds a drain under way leaves its
        // task to it: the drainer re-checks the queues after it lets go.
        while (rejectingStranded.compareAndSet(false, true)) {
            try {
                while (true) rejectTask(pool.global.poll() ?: pool.fair.poll() ?: break, startFailure = cause)
            } finally {
                rejectingStranded.set(false)
            }
            // A shutdown that came while the start was failing could not terminate the pool (the
            // worker was counted, then the queues held work): with both now empty, it can.
            val lifecycle = pool.lifecycle
            if (lifecycle.isShutdown()) lifecycle.locked { lifecycle.tryTerminateLocked() } // wakes the monitor to exit if it terminated
            if (pool.idle.liveCount != 0 || (pool.global.size() == 0 && !pool.fair.hasWork())) return
        }
    }
}
