package dev.stealing.internal.join

import dev.stealing.internal.jvm.fieldHandle
import dev.stealing.internal.worker.Worker
import java.lang.invoke.VarHandle
import java.util.concurrent.Callable

/**
 * The callable of a task created by the executor's `submit`, `invokeAll` or `invokeAny`: a
 * task that `cancel(true)` interrupts while it runs. Wraps either a [Callable] or a [Runnable]
 * with its result, so `submit(Runnable)` allocates one object here, not two.
 *
 * Its claim word `runner` (through [RUNNER]): null (not claimed), the running thread, CLAIMED
 * (ran, or running and no longer interruptible), INTERRUPTING (a `cancel(true)` is interrupting
 * the runner, who waits for it to finish) or DISCARDED (cancelled before anyone claimed it).
 * The runner's CAS from itself to CLAIMED and the canceller's CAS from that thread to
 * INTERRUPTING decide which comes first, so an interrupt lands only while the task runs and
 * is taken back before its thread runs anything else.
 */
internal class InterruptibleCall<T> private constructor(
    private var callable: Callable<T>?,
    private var runnable: Runnable?,
    private var value: T?,
) : Callable<T> {
    constructor(callable: Callable<T>) : this(callable, null, null)
    constructor(runnable: Runnable, value: T) : this(null, runnable, value)

    /** The claim word (see the class comment); through [RUNNER]. */
    @Suppress("unused") private var runner: Any? = null

    @Suppress("UNCHECKED_CAST")
    override fun call(): T {
        callable?.let { return it.call() }
        runnable!!.run()
        return value as T
    }

    /** [JoinableTask.runOnce] of [task], whose callable this is. */
    fun runFor(task: JoinableTask) {
        val me = Thread.currentThread()
        if (!RUNNER.compareAndSet(this, null, me)) { // claims the run: exactly once
            // Cancelled while queued: the first to take the tombstone counts it as discarded.
            if (RUNNER.compareAndSet(this, DISCARDED, CLAIMED)) (me as? Worker)?.counters?.countCancelledSkipped()
            return
        }
        val interruptedBefore = me.isInterrupted
        if (task.isPending()) task.call(this)
        callable = null; runnable = null; value = null // plain: nobody calls it again
        if (!RUNNER.compareAndSet(this, me, CLAIMED)) {
            // cancel(true) took the claim word from us (pairs with its CAS): wait until its
            // interrupt has landed, then take back that interrupt, which was meant for this
            // task only, so it cannot reach what this thread runs next.
            while (RUNNER.getVolatile(this) === INTERRUPTING) Thread.yield() // a few instructions, unless descheduled
            if (!interruptedBefore) Thread.interrupted()
        }
    }

    /** The task was just cancelled (its result is set): interrupt the runner if asked to, or drop the work. */
    fun cancelled(mayInterruptIfRunning: Boolean) {
        while (true) {
            when (val r = RUNNER.getVolatile(this)) {
                null -> if (RUNNER.compareAndSet(this, null, DISCARDED)) {
                    callable = null; runnable = null; value = null // never claimed now: nobody reads them
                    return
                }
                is Thread -> {
                    if (!mayInterruptIfRunning) return
                    // Pairs with the runner's CAS from itself to CLAIMED: only one succeeds.
                    if (RUNNER.compareAndSet(this, r, INTERRUPTING)) {
                        try {
                            r.interrupt()
                        } finally {
                            RUNNER.setVolatile(this, CLAIMED) // releases the runner's wait
                        }
                        return
                    }
                }
                else -> return // CLAIMED, DISCARDED (or another cancel is interrupting)
            }
        }
    }

    private companion object {
        val CLAIMED = Any()
        val INTERRUPTING = Any()
        val DISCARDED = Any()
        val RUNNER: VarHandle = fieldHandle(InterruptibleCall::class.java, "runner", Any::class.java)
    }
}
