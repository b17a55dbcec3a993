package dev.stealing

import dev.stealing.internal.idle.enterBlocking
import dev.stealing.internal.idle.exitBlocking
import dev.stealing.internal.join.InterruptibleCall
import dev.stealing.internal.join.helpThief
import dev.stealing.internal.jvm.fieldHandle
import dev.stealing.internal.queue.SameTask
import dev.stealing.internal.worker.Worker
import java.lang.invoke.VarHandle
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
public class ForkedTask<T> internal constructor(callable: Callable<T>) : RunnableFuture<T> {
    // State: `result` holds NOT_DONE (or WAITING, once a thread is about to block on this task's
    // monitor) until a single CAS installs the value or a failure (as in `CompletableFuture`).
    // The completer notifies the monitor only if its CAS replaced WAITING. The claim: a forked
    // task's `callable` field holds the callable until a CAS claims it (null) or cancel drops it
    // (DISCARDED); a submitted task's holds an InterruptibleCall for good, whose own claim word
    // also records the running thread for `cancel(true)`. Three reference fields in all, so a
    // fork allocates one small object.

    /**
     * The callable, until claimed (null) or dropped by [cancel] ([DISCARDED]); an
     * [InterruptibleCall] stays (it holds its own claim). Typed, so the fork path reads it
     * without an interface type check; changed only by CAS ([CALLABLE]).
     *
     * Not volatile: a volatile store in the constructor costs a full fence on every fork
     * (docs/investigations/2026-11-24-fork-join.md). The plain store reaches other threads with the task
     * itself, through the release/acquire of the queue that hands the task over (`bottom` of a
     * deque, a slot's sequence in the global queue) or the caller's own publication of the
     * returned task, as [result]'s first value does. A plain read that misses another thread's
     * CAS still returns the old callable, so the claim or cancel CAS that follows it fails.
     */
    private var callable: Callable<*>? = callable

    /**
     * [NOT_DONE] or [WAITING] until completion; then the value ([NULL_VALUE] for null) or a
     * [Failure]. Completion is the single CAS away from NOT_DONE or WAITING in [complete].
     * Through [RESULT].
     */
    @Suppress("unused") private var result: Any? = NOT_DONE

    /** The worker that stole this task, if one did (set by [Worker.stealFrom]); for helping. */
    @Volatile internal var stolenBy: Worker? = null

    private fun result(): Any? = RESULT.getVolatile(this) // pairs with the CASes on result

    private fun isPending(r: Any?): Boolean = r === NOT_DONE || r === WAITING

    /**
     * Runs the task unless it was already claimed (it runs at most once) or cancelled. Called by
     * the pool; a direct call is allowed and runs it here if nobody did yet.
     */
    override fun run() {
        val c = callable ?: return // claimed: it runs once
        if (c is InterruptibleCall<*>) return c.runFor(this)
        if (c === DISCARDED) return discardOnce()
        // Claims the run: exactly once. Pairs with the other claimers' CAS and cancel()'s.
        if (!CALLABLE.compareAndSet(this, c, null)) return
        if (isPending(result())) call(c)
    }

    /** Cancelled while queued: the first to take the tombstone from a queue counts it as discarded dead work. */
    private fun discardOnce() {
        if (CALLABLE.compareAndSet(this, DISCARDED, null)) (Thread.currentThread() as? Worker)?.counters?.countCancelledSkipped()
    }

    /** For [InterruptibleCall]: whether the task is still to be run (not done or cancelled). */
    internal fun isPending(): Boolean = isPending(result())

    internal fun call(c: Callable<*>) {
        val value: Any? = try {
            c.call()
        } catch (e: Throwable) {
            complete(Failure(e, cancelled = false))
            return
        }
        complete(value ?: NULL_VALUE)
    }

    private fun complete(outcome: Any): Boolean {
        while (true) {
            val r = result()
            if (!isPending(r)) return false
            if (RESULT.compareAndSet(this, r, outcome)) {
                // A waiter moved NOT_DONE to WAITING before it took the monitor and re-checked
                // (waitUntilDone): notifying under the monitor cannot fall between its re-check
                // and its wait().
                if (r === WAITING) synchronized(this) { monitor().notifyAll() }
                return true
            }
        }
    }

    /** Whether the task has completed: normally, with an exception, or cancelled. */
    override fun isDone(): Boolean = !isPending(result())

    /** Whether the task was cancelled before it completed. */
    override fun isCancelled(): Boolean = (result() as? Failure)?.cancelled == true

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
    override fun cancel(mayInterruptIfRunning: Boolean): Boolean {
        if (!complete(Failure(CancellationException("task was cancelled"), cancelled = true))) return false
        when (val c = callable) {
            null, DISCARDED -> Unit
            is InterruptibleCall<*> -> c.cancelled(mayInterruptIfRunning)
            // Not claimed yet: drop the callable now; whoever dequeues the task discards it. A
            // failed CAS means a runner claimed it meanwhile: it finds the task done.
            else -> CALLABLE.compareAndSet(this, c, DISCARDED)
        }
        return true
    }

    /**
     * Waits for the result and returns it; inlines or helps when called on a worker (see the
     * class comment). Not interruptible (an interrupt is kept for later, as in `ForkJoinTask`).
     * Throws [CancellationException] if cancelled; rethrows the task's unchecked exception as
     * is, and wraps a checked one in [CompletionException].
     */
    public fun join(): T {
        if (!isDone && !runIfNewestLocal()) {
            tryInlineOrHelp(Long.MAX_VALUE)
            if (!isDone) blockUntilDone(Long.MAX_VALUE, interruptible = false)
        }
        val r = result()
        if (r !is Failure) return unwrap(r)
        val e = r.exception
        throw if (r.cancelled || e is RuntimeException || e is Error) e else CompletionException(e)
    }

    /**
     * Like [join], but interruptible and a failure is wrapped in [ExecutionException], as
     * `Future` requires. A finished task's outcome is returned even on an interrupted thread;
     * otherwise an interrupted caller gets [InterruptedException] at once (as `FutureTask`).
     */
    @Throws(InterruptedException::class, ExecutionException::class)
    override fun get(): T {
        if (!isDone) {
            if (Thread.interrupted()) throw InterruptedException()
            tryInlineOrHelp(Long.MAX_VALUE)
            if (!isDone) blockUntilDone(Long.MAX_VALUE, interruptible = true)
        }
        return report()
    }

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
    @Throws(InterruptedException::class, ExecutionException::class, TimeoutException::class)
    override fun get(timeout: Long, unit: TimeUnit): T {
        if (!isDone) {
            if (Thread.interrupted()) throw InterruptedException()
            val nanos = unit.toNanos(timeout) // saturates at Long.MIN_VALUE / Long.MAX_VALUE
            if (nanos <= 0L) throw TimeoutException("task not done (timeout $timeout $unit)")
            val deadline = if (nanos >= Long.MAX_VALUE / 2) Long.MAX_VALUE else System.nanoTime() + nanos
            tryInlineOrHelp(deadline)
            val left = if (deadline == Long.MAX_VALUE) Long.MAX_VALUE else deadline - System.nanoTime()
            if (!isDone && !blockUntilDone(left, interruptible = true)) {
                throw TimeoutException("task not done after $timeout $unit")
            }
        }
        return report()
    }

    private fun report(): T {
        val r = result()
        if (r !is Failure) return unwrap(r)
        throw if (r.cancelled) r.exception else ExecutionException(r.exception)
    }

    @Suppress("UNCHECKED_CAST")
    private fun unwrap(r: Any?): T = (if (r === NULL_VALUE) null else r) as T

    /**
     * The common join, kept small: on a worker whose newest queued task is this one, pop it and
     * run it here. False in every other case, which [tryInlineOrHelp] then handles.
     */
    private fun runIfNewestLocal(): Boolean {
        val w = Thread.currentThread() as? Worker ?: return false
        if (!w.deque.popIfNewest(this)) return false
        w.counters.countInlined()
        w.runNested(this)
        return true
    }

    /**
     * On a worker: run this task inline if still queued locally (whatever the nesting
     * depth: leaving it queued while this thread blocks could deadlock a pool of one; not for a
     * zero timeout), else help its thief within the depth bound until done, [deadline] (a
     * nanoTime; Long.MAX_VALUE for none), or about 2,048 spin-waits without a task ([helpThief]).
     */
    private fun tryInlineOrHelp(deadline: Long) {
        val w = Thread.currentThread() as? Worker ?: return // not in its deque unless w forked it
        if (deadline == Long.MAX_VALUE || deadline - System.nanoTime() > 0) {
            val removed = w.removeLocal(this, SameTask)
            if (removed != null) {
                w.counters.countInlined()
                w.runNested(removed)
                return
            }
        }
        helpThief(w, deadline, { stolenBy }, { isDone })
    }

    /**
     * Blocks until done or [nanos] pass; true if done. A worker (of any pool) blocks inside a
     * blocking region of its own pool: another worker runs in its place while it waits (its
     * deque may still hold tasks if helping stopped at the depth bound).
     */
    private fun blockUntilDone(nanos: Long, interruptible: Boolean): Boolean {
        val w = Thread.currentThread() as? Worker ?: return waitUntilDone(nanos, interruptible)
        w.counters.countBlockedJoin()
        w.enterBlocking()
        try {
            return waitUntilDone(nanos, interruptible)
        } finally {
            w.exitBlocking()
        }
    }

    private fun waitUntilDone(nanos: Long, interruptible: Boolean): Boolean {
        // Announce the waiter before taking the monitor; the completer notifies only if its CAS
        // replaced WAITING. Fails only when the task completed meanwhile (or another waiter set it).
        RESULT.compareAndSet(this, NOT_DONE, WAITING)
        val deadline = if (nanos == Long.MAX_VALUE) Long.MAX_VALUE else System.nanoTime() + nanos
        var interrupted = false
        try {
            synchronized(this) {
                while (!isDone) {
                    val left = if (deadline == Long.MAX_VALUE) 0L else deadline - System.nanoTime()
                    if (deadline != Long.MAX_VALUE && left <= 0) return false
                    try {
                        if (deadline == Long.MAX_VALUE) monitor().wait() else TimeUnit.NANOSECONDS.timedWait(this, left)
                    } catch (e: InterruptedException) {
                        if (interruptible) throw e
                        interrupted = true
                    }
                }
            }
            return true
        } finally {
            if (interrupted) Thread.currentThread().interrupt()
        }
    }

    // This task is its own monitor (waitUntilDone, complete). Object.wait and notifyAll are
    // reachable from Kotlin only through java.lang.Object, which Kotlin maps to Any and warns
    // about; this is the one place that names it.
    @Suppress("PLATFORM_CLASS_MAPPED_TO_KOTLIN")
    private fun monitor(): java.lang.Object = this as java.lang.Object

    /** The task and its state, e.g. `ForkedTask@1b6d3586[completed normally]`. */
    override fun toString(): String {
        val r = result()
        val state = when {
            isPending(r) -> "not completed"
            r !is Failure -> "completed normally"
            r.cancelled -> "cancelled"
            else -> "completed exceptionally: ${r.exception}"
        }
        return "ForkedTask@${Integer.toHexString(hashCode())}[$state]"
    }

    private class Failure(@JvmField val exception: Throwable, @JvmField val cancelled: Boolean)

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
        public fun <T> fork(task: Callable<T>): ForkedTask<T> = forkOnCurrentWorker(task)

        /** The callable of a task cancelled before anyone claimed it (never called). */
        private val DISCARDED: Callable<*> = Callable { error("a discarded task is never called") }

        private val NOT_DONE = Any()
        private val WAITING = Any()
        private val NULL_VALUE = Any()
        private val RESULT: VarHandle = fieldHandle(ForkedTask::class.java, "result", Any::class.java)
        private val CALLABLE: VarHandle = fieldHandle(ForkedTask::class.java, "callable", Callable::class.java)
    }
}
