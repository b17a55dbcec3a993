package dev.stealing.internal.pool

import dev.stealing.internal.idle.ParkState
import dev.stealing.internal.timer.DelayResume
import dev.stealing.internal.timer.FallbackTimer
import dev.stealing.internal.timer.PeriodicTasks
import dev.stealing.internal.timer.TimeoutTimer
import dev.stealing.internal.timer.Timer
import dev.stealing.internal.timer.TimerHeap
import dev.stealing.internal.timer.TimerHost
import dev.stealing.internal.timer.deadlineAfterMillis
import dev.stealing.internal.worker.Worker
import kotlinx.coroutines.CancellableContinuation
import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.DisposableHandle
import kotlinx.coroutines.cancel
import java.lang.invoke.VarHandle
import java.util.concurrent.atomic.AtomicInteger
import java.util.concurrent.atomic.LongAdder
import java.util.concurrent.locks.LockSupport
import kotlin.coroutines.CoroutineContext
import kotlin.coroutines.resume

/**
 * Where a timer goes, and the pool's side of timers (the workers' side is `WorkerTimers` and
 * `WorkerParking`: they take due timers between tasks and before they search, and park no
 * longer than their next deadline). Design and proofs: `docs/timers.md`.
 *
 * Placement ([addTimer]): a timer created on a core worker goes into that worker's own
 * [TimerHeap], with no signal: the worker is running and looks at its heap before it parks.
 * A keyed timer goes to its key's worker. Any other (from outside the pool, or from an extra
 * worker, which may retire) goes to a core worker chosen round-robin. A timer for another
 * worker is offered to its heap's inbox (a CAS, no lock: [TimerHeap.offer]); if that worker is
 * idle and parks past the timer's deadline, it is unparked to recompute its park timeout. That
 * wake-up cannot be lost: the offerer pushes, then reads the worker's park state and park
 * deadline; the worker writes IDLE and its park deadline, then reads its inbox
 * ([TimerHeap.offer], [TimerHeap.publishParkDeadline]). A thief or the monitor that takes a
 * busy worker's offers in keeps the heap's own rule: it publishes the new earliest timer,
 * fences and reads the park state; the worker writes IDLE, fences (in its idle push) and only
 * then reads its earliest timer.
 *
 * Lateness: a due timer waits for its worker's next look (at most
 * [StealingOptions.globalCheckInterval] tasks) unless another worker takes it first: idle and
 * searching workers take due timers from every heap, and the starvation monitor wakes one when a
 * worker whose timer is due is blocked or has been in one task since the monitor's last look.
 */
internal class PoolTimers(private val pool: WorkStealingPool) : TimerHost {
    /** Round-robin cursor choosing the core worker that holds a timer created off the core workers. */
    private val placement = AtomicInteger()

    /** Timers created off the pool's workers. */
    val timersFromOutside = LongAdder()

    /** Timers cancelled off the pool's workers (a worker counts its own). */
    val timersCancelled = LongAdder()

    override val name: String get() = pool.name
    override val periodicTasks = PeriodicTasks()

    override fun isShutdown(): Boolean = pool.isShutdown()

    override fun countRejected() {
        pool.rejected.increment()
    }

    override fun onKeyedWorkerAtTopLevel(slot: Int): Boolean =
        pool.currentWorker()?.let { it.index == slot && it.inlineDepth == 0 } == true

    override fun addTimer(timer: Timer, keyedSlot: Int): Boolean {
        val w = pool.currentWorker()
        if (w != null) {
            // Refused after shutdown, from a worker too (unlike its local forks): timers accepted
            // then would keep a shut-down pool alive forever (a coroutine looping on delay), and
            // kotlinx's executor dispatchers and ScheduledThreadPoolExecutor refuse them too.
            if (pool.isShutdown()) return false
            val target = when {
                keyedSlot >= 0 -> pool.workers.getOrNull(keyedSlot)
                !w.isExtra -> w
                else -> roundRobinCoreWorker()
            } ?: return false
            return insertTimer(target, timer, w)
        }
        // From outside: counted while it checks the run state and inserts, so quiescence cannot
        // pass between the two (the Dekker pair of executeKeyed, on the same counter).
        try {
            return pool.lifecycle.countedOutsideOffer {
                if (pool.isShutdown()) return false
                val target = (if (keyedSlot >= 0) pool.workers.getOrNull(keyedSlot) else roundRobinCoreWorker()) ?: return false
                if (!insertTimer(target, timer, null)) return false
                timersFromOutside.increment()
                true
            }
        } finally {
            if (pool.isShutdown()) pool.tryQuiesce() // a quiescence check may have skipped this pool for us
        }
    }

    /**
     * Puts [timer] into [target]'s timers: its own heap when [target] is the caller, else its inbox
     * ([TimerHeap.offer]: one CAS, no lock). An idle [target] is unparked only if the timer is due
     * before the deadline it parks until; a busy one takes the timer in at its next look, and the
     * starvation monitor is told in case it is stuck ([StarvationMonitor.onTimerAdded]).
     */
    private fun insertTimer(target: Worker, timer: Timer, caller: Worker?): Boolean {
        val heap = target.timers!!
        if (target === caller) return heap.add(timer) != TimerHeap.CLOSED
        val offered = heap.offer(timer) // pushes, then reads the owner's park deadline (its Dekker pair)
        if (offered == TimerHeap.CLOSED) return false
        // The park state is read after the push too: a worker that was not idle then writes IDLE
        // later, and only after that publishes its park deadline and reads its inbox.
        if (target.idleNode.parkState() == ParkState.IDLE) {
            if (offered == TimerHeap.OFFERED_EARLIER) LockSupport.unpark(target)
        } else {
            // Pairs with the monitor's `sleeping` write and fence before its look at the workers' timers.
            pool.monitor?.onTimerAdded(target)
        }
        return true
    }

    /**
     * Takes [target]'s offered timers into its heap for it (a thief or the monitor: [target] is busy
     * and may not look in time); with [tryOnly], not if its heap's lock is held; a volatile read when
     * it has none. If that makes an earlier timer the earliest, an idle [target] is unparked to
     * recompute its park timeout: it may have read its inbox (empty: taken here) before this
     * published the new earliest.
     */
    fun takeOffersOf(target: Worker, tryOnly: Boolean) {
        val heap = target.timers ?: return
        val lowered = if (tryOnly) heap.tryTakeOffers() else heap.takeOffers()
        if (lowered) wakeForEarlierTimer(target)
    }

    /**
     * An earlier timer was published in [target]'s heap by another thread. Pairs with the fence
     * after the IDLE write in IdleControl.goIdle(): either this read sees the worker idle (and the
     * unpark makes it recompute its timeout), or the worker's read of its earliest timer, after that
     * fence, sees the new one. The same fence pairs with the monitor's `sleeping` write and fence
     * before its look at the heaps.
     */
    private fun wakeForEarlierTimer(target: Worker) {
        VarHandle.fullFence()
        if (target.idleNode.parkState() == ParkState.IDLE) LockSupport.unpark(target) else pool.monitor?.onTimerAdded(target)
    }

    /** A core worker for a timer created off the core workers; starts the core workers on first need. */
    private fun roundRobinCoreWorker(): Worker? {
        val slot = Math.floorMod(placement.getAndIncrement(), pool.parallelism)
        pool.workers.getOrNull(slot)?.let { return it }
        pool.threads.startCoreWorkers()
        return pool.workers.getOrNull(slot)
    }

    /**
     * A timer was cancelled by its owner: out of its heap now, counted if it was still there (not
     * yet due); a shut-down pool may now be quiescent.
     */
    override fun timerCancelled(timer: Timer) {
        if (!removeTimer(timer)) return
        // The common case, a withTimeout that ended on a worker, counts on that worker's own field.
        val w = pool.currentWorker()
        if (w != null) w.counters.countTimerCancelled() else timersCancelled.increment()
    }

    /** Takes [timer] out of its heap if it is in one (true then); a shut-down pool may now be quiescent. */
    override fun removeTimer(timer: Timer): Boolean {
        val removed = timer.heap?.remove(timer) == true
        if (pool.isShutdown()) pool.tryQuiesce()
        return removed
    }

    /** `delay` on a dispatcher of this pool ([dispatcher] may resume it undispatched; see [DelayResume]). */
    fun scheduleResume(
        timeMillis: Long,
        continuation: CancellableContinuation<Unit>,
        dispatcher: CoroutineDispatcher?,
        keyedSlot: Int = -1,
    ) {
        val timer = DelayResume(deadlineAfterMillis(timeMillis), this, continuation, dispatcher, keyedSlot)
        if (addTimer(timer, keyedSlot)) {
            continuation.invokeOnCancellation(timer) // a cancelled delay removes its timer at once
            return
        }
        // Refused (the pool is shut down): as kotlinx's executor dispatchers, cancel the job and
        // let kotlinx's own timer finish the wait if the cancellation cannot (NonCancellable).
        pool.rejected.increment()
        continuation.context.cancel(rejection("${pool.label()} is shut down", "delay"))
        if (continuation.isActive) {
            FallbackTimer.after(timer.deadline - System.nanoTime()) { if (continuation.isActive) continuation.resume(Unit) }
        }
    }

    /** `withTimeout` on a dispatcher of this pool: [block] runs on a worker when due, unless disposed first. */
    fun scheduleTimeout(timeMillis: Long, block: Runnable, context: CoroutineContext): DisposableHandle {
        val timer = TimeoutTimer(deadlineAfterMillis(timeMillis), this, block, context)
        if (addTimer(timer)) return timer
        pool.rejected.increment()
        context.cancel(rejection("${pool.label()} is shut down", "timeout"))
        return FallbackTimer.after(timer.deadline - System.nanoTime()) { block.run() }
    }

    /**
     * Whether some core worker's timer is due now (part of the re-scan, [WorkStealingPool.hasVisibleWork]).
     * Offered timers not yet taken in are not seen: their worker takes them in before it parks, and
     * for a busy worker the monitor does ([StarvationMonitor]).
     */
    fun hasDueTimers(): Boolean {
        var now = 0L
        var read = false
        for (i in 0 until pool.parallelism) {
            val heap = pool.workers.getOrNull(i)?.timers ?: continue
            if (heap.earliest == null) continue
            if (!read) {
                now = System.nanoTime()
                read = true
            }
            if (heap.isDue(now)) return true
        }
        return false
    }

    /** Whether any timer is pending, offered ones too (quiescence waits for them: they run after shutdown). */
    fun hasPendingTimers(): Boolean {
        for (i in 0 until pool.parallelism) if (pool.workers.getOrNull(i)?.timers?.hasPending() == true) return true
        return false
    }
}
