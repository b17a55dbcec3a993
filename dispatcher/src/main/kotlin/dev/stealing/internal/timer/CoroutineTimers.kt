package dev.stealing.internal.timer

import dev.stealing.internal.jvm.fieldHandle
import kotlinx.coroutines.CancellableContinuation
import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.DelicateCoroutinesApi
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.DisposableHandle
import kotlinx.coroutines.ExperimentalCoroutinesApi
import kotlinx.coroutines.GlobalScope
import kotlinx.coroutines.Job
import kotlinx.coroutines.cancel
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import java.lang.invoke.VarHandle
import java.util.concurrent.CancellationException
import kotlin.coroutines.CoroutineContext
import kotlin.coroutines.resume

/**
 * The two timers behind kotlinx's `Delay` on this library's dispatchers: [DelayResume] resumes
 * a coroutine suspended in `delay`, [TimeoutTimer] runs `withTimeout`'s block when time is up.
 * Both are ended exactly once by a CAS on [CoroutineTimer.state]: fired ([run]), disposed
 * (cancelled by the coroutine, and then removed from its heap at once) or abandoned (the pool
 * stopped).
 */
internal abstract class CoroutineTimer(deadline: Long, @JvmField val host: TimerHost) :
    Timer(deadline), DisposableHandle, (Throwable?) -> Unit {
    @Suppress("unused") private var state = PENDING // through STATE

    /** PENDING to FIRED: true if this call fires it. */
    protected fun claimFire(): Boolean = STATE.compareAndSet(this, PENDING, FIRED)

    /** The coroutine no longer needs it (`withTimeout` ended, `delay` cancelled): remove it now. */
    override fun dispose() {
        if (STATE.compareAndSet(this, PENDING, CANCELLED)) host.timerCancelled(this)
    }

    /** As a cancellation handler of the `delay`'s continuation: [dispose]. */
    override fun invoke(cause: Throwable?): Unit = dispose()

    /**
     * The pool stopped: as kotlinx's executor dispatchers do when their executor rejects a
     * timer, the coroutine's job is cancelled; if that cannot end the wait (no job, or a
     * `NonCancellable` section), the timer is handed to kotlinx's default timer for the rest of
     * its time, so the coroutine still goes on.
     */
    override fun abandon(why: String) {
        if (STATE.compareAndSet(this, PENDING, CANCELLED)) {
            host.countRejected()
            context().cancel(CancellationException(why))
            if (!endedByCancel()) fallBack(maxOf(0L, deadline - System.nanoTime()))
        }
    }

    protected abstract fun context(): CoroutineContext
    protected abstract fun endedByCancel(): Boolean
    protected abstract fun fallBack(remainingNanos: Long)

    private companion object {
        const val PENDING = 0
        const val FIRED = 1
        const val CANCELLED = 2
        val STATE: VarHandle = fieldHandle(CoroutineTimer::class.java, "state", Int::class.javaPrimitiveType!!)
    }
}

/**
 * Resumes [continuation] (suspended in `delay`) when due. On a worker it may resume it right
 * there, without a dispatch, when the coroutine's own dispatcher is [dispatcher] and, for a
 * keyed dispatcher, this is the key's worker ([keyedSlot]); in every other case (a
 * `limitedParallelism` view, a fair queue, a keyed timer taken over by another worker) it
 * resumes through the coroutine's dispatcher, so views and queues keep their guarantees.
 */
internal class DelayResume(
    deadline: Long,
    host: TimerHost,
    private val continuation: CancellableContinuation<Unit>,
    /** The dispatcher that scheduled it, or null to always resume through a dispatch (fair queues). */
    private val dispatcher: CoroutineDispatcher?,
    /** The keyed dispatcher's worker slot, or -1. */
    private val keyedSlot: Int,
) : CoroutineTimer(deadline, host) {
    @OptIn(ExperimentalCoroutinesApi::class)
    override fun run() {
        if (!claimFire()) return
        val d = dispatcher
        // A keyed coroutine resumes here only on its key's worker and not nested in another
        // task (a join that helps may run this timer inside a keyed task of the same key).
        if (d != null && (keyedSlot < 0 || host.onKeyedWorkerAtTopLevel(keyedSlot))) {
            // Undispatched only if the continuation's dispatcher is d itself; otherwise kotlinx
            // dispatches it (a limitedParallelism view of d, for instance).
            with(continuation) { d.resumeUndispatched(Unit) }
        } else {
            continuation.resume(Unit)
        }
    }

    override fun context(): CoroutineContext = continuation.context
    override fun endedByCancel(): Boolean = continuation.isCancelled || continuation.isCompleted
    override fun fallBack(remainingNanos: Long) {
        FallbackTimer.after(remainingNanos) { if (continuation.isActive) continuation.resume(Unit) }
    }

    override fun toString(): String = "DelayResume[$continuation]"
}

/** Runs `withTimeout`'s [block] when due; disposed when the block ends first. */
internal class TimeoutTimer(
    deadline: Long,
    host: TimerHost,
    private val block: Runnable,
    private val context: CoroutineContext,
) : CoroutineTimer(deadline, host) {
    override fun run() {
        if (claimFire()) block.run()
    }

    override fun context(): CoroutineContext = context
    override fun endedByCancel(): Boolean = context[Job]?.isActive == false
    override fun fallBack(remainingNanos: Long) {
        FallbackTimer.after(remainingNanos) { block.run() }
    }

    override fun toString(): String = "TimeoutTimer[$block]"
}

/**
 * kotlinx's own default timer, for the rare timer this library cannot keep: one created from
 * outside a pool that is shut down, or left behind when a pool stops. The same fallback as
 * kotlinx's executor dispatchers use on rejection; it starts kotlinx's timer thread on first use.
 */
internal object FallbackTimer {
    /** Runs [action] after [nanos], on kotlinx's timer thread; disposing the handle cancels it. */
    @OptIn(DelicateCoroutinesApi::class)
    fun after(nanos: Long, action: () -> Unit): DisposableHandle {
        val millis = (nanos.coerceIn(0L, MAX_DELAY_NANOS) + 999_999L) / 1_000_000L
        // Dispatchers.Unconfined has no Delay of its own, so this delay uses kotlinx's default one.
        val job = GlobalScope.launch(Dispatchers.Unconfined, CoroutineStart.UNDISPATCHED) {
            delay(millis)
            action()
        }
        return DisposableHandle { job.cancel() }
    }
}
