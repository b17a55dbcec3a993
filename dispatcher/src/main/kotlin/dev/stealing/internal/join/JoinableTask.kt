package dev.stealing.internal.join

import dev.stealing.internal.idle.enterBlocking
import dev.stealing.internal.idle.exitBlocking
import dev.stealing.internal.jvm.fieldHandle
import dev.stealing.internal.queue.SameTask
import dev.stealing.internal.worker.Worker
import java.lang.invoke.VarHandle
import java.util.concurrent.Callable
import java.util.concurrent.CancellationException
import java.util.concurrent.CompletionException
import java.util.concurrent.ExecutionException
import java.util.concurrent.TimeUnit
import java.util.concurrent.TimeoutException

/**
 * The engine's forked task: a callable run at most once, its outcome, and the join that runs it
 * in place, helps its thief or blocks (docs/inlining.md). The public `ForkedTask` is this class
 * with the `Future` face; the loops fork plain instances. The engine knows only this class.
 *
 * State: [result] holds NOT_DONE (or WAITING, once a thread is about to block on this task's
 * monitor) until a single CAS installs the value or a failure (as in `CompletableFuture`). The
 * completer notifies the monitor only if its CAS replaced WAITING. The claim: a forked task's
 * [callable] holds the callable until a CAS claims it (null) or cancel drops it (DISCARDED); a
 * submitted task's holds an [InterruptibleCall] for good, whose own claim word also records the
 * running thread for `cancel(true)`. Three reference fields in all, so a fork allocates one
 * small object: the public class is a subclass, not a wrapper.
 *
 * Public only because Kotlin allows no public subclass of an internal class; it is not part of
 * the API: the module does not export its package, its constructor and members are internal,
 * and those members are hidden from Java (`@JvmSynthetic`), so a Java user of `ForkedTask` sees
 * `run` alone from here.
 */
public open class JoinableTask internal constructor(callable: Callable<*>) : Runnable {
    /**
     * The callable, until claimed (null) or dropped by [cancelTask] ([DISCARDED]); an
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

    /** The worker that stole this task, if one did ([recordThief]); for helping. */
    @Volatile private var stolenBy: Worker? = null

    private fun result(): Any? = RESULT.getVolatile(this) // pairs with the CASes on result

    private fun isPending(r: Any?): Boolean = r === NOT_DONE || r === WAITING

    /** Runs the task unless it was already claimed or cancelled ([runOnce]). */
    public override fun run() {
        runOnce()
    }

    /**
     * Runs the task unless it was already claimed (it runs at most once) or cancelled. Called by
     * the pool; a direct call is allowed and runs it here if nobody did yet.
     */
    @JvmSynthetic
    internal fun runOnce() {
        val c = callable ?: return // claimed: it runs once
        if (c is InterruptibleCall<*>) return c.runFor(this)
        if (c === DISCARDED) return discardOnce()
        // Claims the run: exactly once. Pairs with the other claimers' CAS and cancelTask()'s.
        if (!CALLABLE.compareAndSet(this, c, null)) return
        if (isPending(result())) call(c)
    }

    /** Cancelled while queued: the first to take the tombstone from a queue counts it as discarded dead work. */
    private fun discardOnce() {
        if (CALLABLE.compareAndSet(this, DISCARDED, null)) (Thread.currentThread() as? Worker)?.counters?.countCancelledSkipped()
    }

    /** [thief] stole this task from a queue (the pool, after each steal): a joiner helps it. */
    @JvmSynthetic
    internal fun recordThief(thief: Worker) {
        stolenBy = thief
    }

    /** For [InterruptibleCall]: whether the task is still to be run (not done or cancelled). */
    @JvmSynthetic
    internal fun isPending(): Boolean = isPending(result())

    @JvmSynthetic
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
    @JvmSynthetic
    internal fun isCompleted(): Boolean = !isPending(result())

    /** Whether the task was cancelled before it completed. */
    @JvmSynthetic
    internal fun wasCancelled(): Boolean = (result() as? Failure)?.cancelled == true

    /**
     * `Future.cancel`: completes the task as cancelled if it has not completed; a task still
     * queued never runs its callable; with [mayInterruptIfRunning] a running [InterruptibleCall]
     * is interrupted. True if this call cancelled it.
     */
    @JvmSynthetic
    internal fun cancelTask(mayInterruptIfRunning: Boolean): Boolean {
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
     * `ForkedTask.join`: waits (inlining or helping on a worker) and returns the value, or throws
     * the cancellation, the unchecked exception as is, or a checked one in [CompletionException].
     */
    @JvmSynthetic
    internal fun joinResult(): Any? {
        if (!isCompleted() && !runIfNewestLocal()) {
            tryInlineOrHelp(Long.MAX_VALUE)
            if (!isCompleted()) blockUntilDone(Long.MAX_VALUE, interruptible = false)
        }
        val r = result()
        if (r !is Failure) return unwrap(r)
        val e = r.exception
        throw if (r.cancelled || e is RuntimeException || e is Error) e else CompletionException(e)
    }

    /** `Future.get()`: as [joinResult], but interruptible, and a failure in [ExecutionException]. */
    @JvmSynthetic
    internal fun getResult(): Any? {
        if (!isCompleted()) {
            if (Thread.interrupted()) throw InterruptedException()
            tryInlineOrHelp(Long.MAX_VALUE)
            if (!isCompleted()) blockUntilDone(Long.MAX_VALUE, interruptible = true)
        }
        return report()
    }

    /** `Future.get(timeout, unit)`: as [getResult], within [timeout]; see `ForkedTask.get`. */
    @JvmSynthetic
    internal fun getResult(timeout: Long, unit: TimeUnit): Any? {
        if (!isCompleted()) {
            if (Thread.interrupted()) throw InterruptedException()
            val nanos = unit.toNanos(timeout) // saturates at Long.MIN_VALUE / Long.MAX_VALUE
            if (nanos <= 0L) throw TimeoutException("task not done (timeout $timeout $unit)")
            val deadline = if (nanos >= Long.MAX_VALUE / 2) Long.MAX_VALUE else System.nanoTime() + nanos
            tryInlineOrHelp(deadline)
            val left = if (deadline == Long.MAX_VALUE) Long.MAX_VALUE else deadline - System.nanoTime()
            if (!isCompleted() && !blockUntilDone(left, interruptible = true)) {
                throw TimeoutException("task not done after $timeout $unit")
            }
        }
        return report()
    }

    private fun report(): Any? {
        val r = result()
        if (r !is Failure) return unwrap(r)
        throw if (r.cancelled) r.exception else ExecutionException(r.exception)
    }

    private fun unwrap(r: Any?): Any? = if (r === NULL_VALUE) null else r

    /**
     * The common join, kept small: on a worker whose newest queued task is this one, pop it and
     * run it here. False in every other case, which [tryInlineOrHelp] then handles.
     */
    private fun runIfNewestLocal(): Boolean {
        val w = Thread.currentThread() as? Worker ?: return false
        if (!w.deque.popIfNewest(this)) return false
        w.counters.countInlined()
        runNestedOn(w)
        return true
    }

    /**
     * Runs this task, which the joiner [w] popped itself, one nesting level deeper, with the
     * bookkeeping of `Worker.runNested` but a direct call of the final [runOnce], so the common
     * join does not go through the task call of `Worker.runTask`, which sees every kind of task
     * and is megamorphic. Nothing to catch: [runOnce] turns any failure of its callable into the
     * task's outcome. A method of its own, with the join's call of it kept small: written as an
     * inline block in the join instead, fib(27) with `ForkedTask` ran 1.45 x slower on Temurin 25.
     */
    private fun runNestedOn(w: Worker) {
        w.enterNested()
        w.counters.countExecuted()
        try {
            runOnce()
        } finally {
            w.exitNested()
        }
        w.endPresumption()
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
        helpThief(w, deadline, { stolenBy }, { isCompleted() })
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
                while (!isCompleted()) {
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

    /** The state for `toString`: `not completed`, `completed normally`, `cancelled` or `completed exceptionally: <exception>`. */
    @JvmSynthetic
    internal fun stateText(): String {
        val r = result()
        return when {
            isPending(r) -> "not completed"
            r !is Failure -> "completed normally"
            r.cancelled -> "cancelled"
            else -> "completed exceptionally: ${r.exception}"
        }
    }

    /** The task and its state, e.g. `JoinableTask@1b6d3586[completed normally]`. */
    override fun toString(): String = "${javaClass.simpleName}@${Integer.toHexString(hashCode())}[${stateText()}]"

    private class Failure(@JvmField val exception: Throwable, @JvmField val cancelled: Boolean)

    private companion object {
        /** The callable of a task cancelled before anyone claimed it (never called). */
        private val DISCARDED: Callable<*> = Callable { error("a discarded task is never called") }

        private val NOT_DONE = Any()
        private val WAITING = Any()
        private val NULL_VALUE = Any()
        private val RESULT: VarHandle = fieldHandle(JoinableTask::class.java, "result", Any::class.java)
        private val CALLABLE: VarHandle = fieldHandle(JoinableTask::class.java, "callable", Callable::class.java)
    }
}
