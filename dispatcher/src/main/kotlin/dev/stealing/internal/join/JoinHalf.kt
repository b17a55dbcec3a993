package dev.stealing.internal.join

import dev.stealing.internal.jvm.StackHeadroom
import dev.stealing.internal.jvm.fieldHandle
import dev.stealing.internal.queue.WorkDeque
import dev.stealing.internal.worker.Worker
import java.lang.invoke.VarHandle
import java.util.concurrent.Callable
import java.util.concurrent.locks.LockSupport

/**
 * The right half of a blocking fork/join ([forkJoinOnWorker]), as its caller pushes it onto its
 * deque. [state] records who claimed it, so that it runs exactly once:
 * - null: queued, unclaimed;
 * - [TAKEN]: its caller claimed it by CAS ([takeBack]) because it could not pop it; the entry
 *   left in a deque is dead and [run] skips it;
 * - a thread: the worker that took it from the deque and claimed it by CAS in [run], and runs it.
 * A caller that pops it back from its own deque owns it with no CAS at all: the deque hands each
 * pushed entry to exactly one taker, and only a taker claims. That is the common case, and what
 * makes this cheaper than a forked `Future`: no claim CAS, no result CAS, no monitor. Only a
 * stolen half publishes an outcome: [value] or [failure], written by the thief before its
 * [completion] store.
 *
 * Subclasses say what the half computes ([compute]): a `Callable` or a `Runnable`.
 */
internal abstract class JoinHalf<B> : CallerOwnedHalf {
    /** null, [TAKEN] or the claiming thread; changed only by CAS ([STATE]). */
    @Volatile @JvmField var state: Any? = null

    /** What a thief computed; written before [completion] becomes [DONE], read after. */
    private var value: B? = null

    /** What a thief's [compute] threw; written before [completion] becomes [DONE], read after. */
    private var failure: Throwable? = null

    /** null until a thief's run ends, then [DONE]; or the caller's thread, parked waiting for it. Through [COMPLETION]. */
    @Volatile private var completion: Any? = null

    /** The half's work; called exactly once, by its caller or by the thief that claimed it. */
    abstract fun compute(): B

    /**
     * The caller takes this half back from [deque], its own, to run it itself: pops it if it is
     * the newest entry (no CAS: the deque hands each entry to one taker, and only a taker claims),
     * else claims it by CAS, leaving a dead entry. False if a thief claimed it first.
     */
    fun takeBack(deque: WorkDeque): Boolean = deque.popIfNewest(this) || claimBack()

    /** The caller, which could not pop this half back: claims it, or returns false if a thief did first. */
    private fun claimBack(): Boolean = STATE.compareAndSet(this, null, TAKEN)

    /**
     * A worker took this half from a deque (a steal): claims and runs it, or skips a dead entry.
     * The stack headroom is reserved before the claim: an Error after the claim and before
     * [completion] would leave the caller waiting for ever, while one before it leaves the half
     * unclaimed, for the caller to take back.
     */
    override fun run() {
        // Volatile read; a stale null only sends this thief on to the CAS below, which then fails.
        if (state != null) return // taken back by its caller: a dead entry
        StackHeadroom.reserve(STACK_FRAMES)
        val thief = Thread.currentThread()
        // Pairs with the CAS in the caller's takeBack(): one of the two CASes from null wins.
        if (!STATE.compareAndSet(this, null, thief)) return
        (thief as? Worker)?.counters?.countForkStolen()
        try {
            value = compute()
        } catch (e: Throwable) {
            failure = e
        }
        // Release of value/failure; pairs with the caller's volatile read of completion in isDone().
        val waiter = COMPLETION.getAndSet(this, DONE)
        if (waiter is Thread) LockSupport.unpark(waiter)
    }

    /** For the caller, once a thief claimed this half: whether its run has ended. */
    // Volatile read; pairs with the thief's getAndSet in run(), after which value and failure are visible.
    fun isDone(): Boolean = completion === DONE

    /** The worker that claimed this half, if it is one (for helping). */
    fun thief(): Worker? = state as? Worker

    /**
     * The caller, once a thief claimed this half: parks until its run ends. Not interruptible:
     * an interrupt is kept and set again on return (as `ForkJoinTask.join`).
     */
    fun awaitDone() {
        // Announces the waiter; fails only if the thief ended meanwhile (its getAndSet came first).
        if (!COMPLETION.compareAndSet(this, null, Thread.currentThread())) return
        var interrupted = false
        while (completion !== DONE) { // volatile read; pairs with the thief's getAndSet in run()
            LockSupport.park(this)
            if (Thread.interrupted()) interrupted = true
        }
        if (interrupted) Thread.currentThread().interrupt()
    }

    /** What the thief computed, once [isDone]. */
    @Suppress("UNCHECKED_CAST")
    fun value(): B = value as B

    /** What the thief's run threw, once [isDone], or null. */
    fun failure(): Throwable? = failure

    internal companion object {
        @JvmField val TAKEN = Any()
        private val DONE = Any()

        /** Headroom a thief reserves before it claims: the claim, the run's catch and the completion. */
        private const val STACK_FRAMES = 32

        private val STATE: VarHandle = fieldHandle(JoinHalf::class.java, "state", Any::class.java)
        private val COMPLETION: VarHandle = fieldHandle(JoinHalf::class.java, "completion", Any::class.java)
    }
}

/** A half that calls a `Callable`. */
internal class CallableHalf<B>(private val callable: Callable<B>) : JoinHalf<B>() {
    override fun compute(): B = callable.call()
}

/** A half that runs a `Runnable`. */
internal class RunnableHalf(private val runnable: Runnable) : JoinHalf<Unit>() {
    override fun compute() = runnable.run()
}
