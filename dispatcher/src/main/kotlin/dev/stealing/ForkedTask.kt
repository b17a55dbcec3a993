package dev.stealing

import dev.stealing.internal.join.JoinableTask
import dev.stealing.internal.pool.captured
import dev.stealing.internal.pool.forkOrReject
import dev.stealing.internal.pool.poolOfCallingWorker
import java.util.concurrent.Callable
import java.util.concurrent.CancellationException
import java.util.concurrent.CompletionException
import java.util.concurrent.ExecutionException
import java.util.concurrent.RejectedExecutionException
import java.util.concurrent.RunnableFuture
import java.util.concurrent.TimeUnit
import java.util.concurrent.TimeoutException

/**
 * A task forked onto a [StealingDispatcher]: a [java.util.concurrent.Future] with a cheap
 * [join]. Created by [StealingDispatcher.fork], by [ForkedTask.fork] (onto the pool of the
 * calling worker) and by the `submit` methods of [StealingDispatcher.executor].
 *
 * [join] and [get] called on a worker of the task's pool first try to run the task *inline*:
 * if it is still queued in the caller's own deque (anywhere in it), it is removed and run right
 * there (always: this nests no deeper than the caller's own recursion, as with
 * `ForkJoinTask.join`). If it was stolen, the caller *helps the thief*: it steals back tasks
 * from the deque of the worker that stole it (those were forked by the target's own run, so
 * they cannot be waiting for a frame of the caller), nested at most
 * [StealingOptions.maxInlineDepth] deep, for a bounded spin (tens of microseconds) without
 * finding one. Only then does it block. It never runs unrelated tasks from its own deque: one of those could join a
 * task that is running lower on this very stack. A worker blocks inside a blocking region of
 * its own pool (another thread runs in its place), whichever pool the task belongs to; any
 * other thread simply blocks.
 *
 * Exactly-once: the task runs at most once, even if it is queued twice or [run] is called
 * directly. [cancel] before it runs completes it as cancelled, and its callable is never called.
 *
 * Interrupts: a task created by the `submit`, `invokeAll` or `invokeAny` methods of
 * [StealingDispatcher.executor] is interrupted by `cancel(true)` while it runs, as a
 * `FutureTask` is; the interrupt is cleared again when the task ends, so it never reaches what
 * the thread runs next. A task created by [StealingDispatcher.fork] is never interrupted by
 * [cancel] (the rule of `ForkJoinTask`): a fork/join tree cancels by completion, not by
 * interrupting the threads that happen to run its parts.
 */
public sealed class ForkedTask<T>(callable: Callable<T>) : JoinableTask(callable), RunnableFuture<T> {
    // The state and the protocol (the claim, the inline join, helping the thief, blocking) are
    // the engine's JoinableTask, which this class extends: a fork is one object.

    /**
     * Runs the task unless it was already claimed (it runs at most once) or cancelled. Called by
     * the pool; a direct call is allowed and runs it here if nobody did yet.
     */
    override fun run() {
        runOnce()
    }

    /** Whether the task has completed: normally, with an exception, or cancelled. */
    override fun isDone(): Boolean = isCompleted()

    /** Whether the task was cancelled before it completed. */
    override fun isCancelled(): Boolean = wasCancelled()

    /**
     * Cancels the task if it has not completed. A task still queued never runs its callable.
     * With [mayInterruptIfRunning], a running task created by the executor's `submit`,
     * `invokeAll` or `invokeAny` is interrupted (the interrupt is cleared when it ends); a
     * forked one ([StealingDispatcher.fork]) is never interrupted, as with `ForkJoinTask`, and
     * runs to its end with its result discarded.
     *
     * @param mayInterruptIfRunning whether to interrupt the thread running a task created by
     *   the executor's `submit`, `invokeAll` or `invokeAny`.
     * @return true if this call cancelled the task, false if it had completed already.
     */
    override fun cancel(mayInterruptIfRunning: Boolean): Boolean = cancelTask(mayInterruptIfRunning)

    /**
     * Waits for the result and returns it; inlines or helps when called on a worker (see the
     * class comment). Not interruptible (an interrupt is kept for later, as in `ForkJoinTask`).
     * Throws [CancellationException] if cancelled; rethrows the task's unchecked exception as
     * is, and wraps a checked one in [CompletionException].
     */
    @Suppress("UNCHECKED_CAST")
    public fun join(): T = joinResult() as T

    /**
     * Like [join], but interruptible and a failure is wrapped in [ExecutionException], as
     * `Future` requires. A finished task's outcome is returned even on an interrupted thread;
     * otherwise an interrupted caller gets [InterruptedException] at once (as `FutureTask`).
     */
    @Suppress("UNCHECKED_CAST")
    @Throws(InterruptedException::class, ExecutionException::class)
    override fun get(): T = getResult() as T

    /**
     * Waits at most [timeout] for the result, as `Future.get` specifies: a finished task's
     * outcome is returned at once; an interrupted caller gets [InterruptedException] before the
     * timeout is considered; a zero or negative [timeout] means "do not wait" and throws
     * [TimeoutException] if the task is not done. Inlining and helping happen as in [join];
     * helping starts no new task after the deadline (one already started runs to its end).
     *
     * @param timeout the longest time to wait, in [unit]s.
     * @param unit the unit of [timeout].
     */
    @Suppress("UNCHECKED_CAST")
    @Throws(InterruptedException::class, ExecutionException::class, TimeoutException::class)
    override fun get(timeout: Long, unit: TimeUnit): T = getResult(timeout, unit) as T

    /** The task and its state, for example `ForkedTask@1b6d3586[completed normally]`. */
    override fun toString(): String = "ForkedTask@${Integer.toHexString(hashCode())}[${stateText()}]"

    /** The static fork, for code that runs in a task and has no pool at hand. */
    public companion object {
        /**
         * Forks [task] onto the pool of the calling worker, as `RecursiveTask.fork()` does: the
         * form of [StealingDispatcher.fork] for code running in a task of the pool, which then
         * need not carry the pool along. Queued on the caller's deque; [join] runs it in place if
         * no other worker took it meanwhile. From Java:
         *
         * ```java
         * static long fib(int n) {
         *     if (n < 2) return n;
         *     ForkedTask<Long> left = ForkedTask.fork(() -> fib(n - 1)); // onto this worker's deque
         *     return fib(n - 2) + left.join();
         * }
         * ```
         *
         * @param task the task to call; its result completes the returned [ForkedTask].
         * @throws IllegalStateException if the calling thread is not a worker of a
         *   [StealingDispatcher]: fork onto a pool with `pool.fork(task)` there (the shared pool:
         *   `StealingDispatcher.getShared().fork(task)`, in Kotlin `StealingDispatcher.fork(task)`).
         * @throws RejectedExecutionException if the worker's pool is stopping (`shutdownNow`).
         */
        @JvmStatic
        public fun <T> fork(task: Callable<T>): ForkedTask<T> {
            val pool = poolOfCallingWorker()
            return forkedTask(pool.captured(task)).also { pool.forkOrReject(it) }
        }
    }
}

/**
 * A new, unforked task that calls [callable]. [ForkedTask] is sealed and this is its one
 * implementation, so that Java cannot construct one: a sealed class's constructor is private in
 * the bytecode, and this function is synthetic.
 */
@JvmSynthetic
internal fun <T> forkedTask(callable: Callable<T>): ForkedTask<T> = PoolForkedTask(callable)

/** See [forkedTask]. */
private class PoolForkedTask<T>(callable: Callable<T>) : ForkedTask<T>(callable)
