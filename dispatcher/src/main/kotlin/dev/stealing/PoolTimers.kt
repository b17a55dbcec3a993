package dev.stealing

import kotlinx.coroutines.CancellableContinuation
import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.DisposableHandle
import kotlinx.coroutines.cancel
import java.lang.invoke.VarHandle
import java.util.concurrent.CancellationException
import java.util.concurrent.locks.LockSupport
import kotlin.coroutines.CoroutineContext
import kotlin.coroutines.resume

/**
 * Where a timer goes, and the pool's side of timers (the workers' side is in `Worker.kt`: they
 * take due timers between tasks and before they search, and park no longer than their next
 * deadline). Design and proofs: `docs/timers.md`.
 *
 * Placement ([addTimer]): a timer created on a core worker goes into that worker's own
 * [TimerHeap], with no signal: the worker is running and looks at its heap before it parks.
 * A keyed timer goes to its key's worker. Any other (from outside the pool, or from an extra
 * worker, which may retire) goes to a core worker chosen round-robin; if that worker is idle it
 * is unparked to recompute its park timeout. That wake-up cannot be lost: the adder publishes
 * the new earliest timer, fences and reads the worker's park state; the worker writes IDLE,
 * fences (in its idle push) and only then reads its earliest timer to choose its timeout.
 *
 * Lateness: a due timer waits for its worker's next look (at most
 * [StealingOptions.globalCheckInterval] tasks) unless another worker takes it first: idle and
 * searching workers take due timers from every heap, and the starvation monitor wakes one when a
 * worker whose timer is due is blocked or has been in one task since the monitor's last look.
 */
internal fun WorkStealingPool.addTimer(timer: Timer, keyedSlot: Int = -1): Boolean {
    val w = currentWorker()
    if (w != null) {
        // Refused after shutdown, from a worker too (unlike its local forks): timers accepted
        // then would keep a shut-down pool alive forever (a coroutine looping on delay), and
        // kotlinx's executor dispatchers and ScheduledThreadPoolExecutor refuse them too.
        if (isShutdown()) return false
        val target = when {
            keyedSlot >= 0 -> workers.getOrNull(keyedSlot)
            !w.isExtra -> w
            else -> roundRobinCoreWorker()
        } ?: return false
        return insertTimer(target, timer, w)
    }
    // From outside: counted while it checks the run state and inserts, so quiescence cannot
    // pass between the two (the Dekker pair of executeKeyed, on the same counter).
    outsideOffers.incrementAndGet()
    try {
        if (isShutdown()) return false
        val target = (if (keyedSlot >= 0) workers.getOrNull(keyedSlot) else roundRobinCoreWorker()) ?: return false
        if (!insertTimer(target, timer, null)) return false
        timersFromOutside.increment()
        return true
    } finally {
        outsideOffers.decrementAndGet()
        if (isShutdown()) tryQuiesce() // a quiescence check may have skipped this pool for us
    }
}

/**
 * Inserts [timer] into [target]'s heap. If [target] is another worker and this timer is now its
 * earliest: an idle [target] is unparked to recompute its park timeout; a busy one may not look
 * at its heap in time, so the starvation monitor is told ([StarvationMonitor.onTimerAdded]).
 */
private fun WorkStealingPool.insertTimer(target: Worker, timer: Timer, caller: Worker?): Boolean {
    val added = target.timers!!.add(timer)
    if (added == TimerHeap.CLOSED) return false
    if (added == TimerHeap.ADDED_EARLIEST && target !== caller) {
        // Pairs with the fence after the IDLE write in IdleControl.goIdle(): either this read
        // sees the worker idle (and the unpark makes it recompute its timeout), or the worker's
        // read of its earliest timer, after that fence, sees this one. The same fence pairs
        // with the monitor's `sleeping` write and fence before its look at the heaps.
        VarHandle.fullFence()
        if (target.idleNode.parkState() == ParkState.IDLE) LockSupport.unpark(target) else monitor?.onTimerAdded(target)
    }
    return true
}

/** A core worker for a timer created off the core workers; starts the core workers on first need. */
private fun WorkStealingPool.roundRobinCoreWorker(): Worker? {
    val slot = Math.floorMod(timerPlacement.getAndIncrement(), parallelism)
    workers.getOrNull(slot)?.let { return it }
    startCoreWorkers()
    return workers.getOrNull(slot)
}

/** A timer was cancelled by its owner: out of its heap now; a shut-down pool may now be quiescent. */
internal fun WorkStealingPool.timerCancelled(timer: Timer) {
    timersCancelled.increment()
    removeTimer(timer)
}

/** Takes [timer] out of its heap if it is in one; a shut-down pool may now be quiescent. */
internal fun WorkStealingPool.removeTimer(timer: Timer) {
    timer.heap?.remove(timer)
    if (isShutdown()) tryQuiesce()
}

/** `delay` on a dispatcher of this pool ([dispatcher] may resume it undispatched; see [DelayResume]). */
internal fun WorkStealingPool.scheduleResume(
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
    rejected.increment()
    continuation.context.cancel(CancellationException("The delay was rejected: $name is shut down"))
    if (continuation.isActive) {
        FallbackTimer.after(timer.deadline - System.nanoTime()) { if (continuation.isActive) continuation.resume(Unit) }
    }
}

/** `withTimeout` on a dispatcher of this pool: [block] runs on a worker when due, unless disposed first. */
internal fun WorkStealingPool.scheduleTimeout(timeMillis: Long, block: Runnable, context: CoroutineContext): DisposableHandle {
    val timer = TimeoutTimer(deadlineAfterMillis(timeMillis), this, block, context)
    if (addTimer(timer)) return timer
    rejected.increment()
    context.cancel(CancellationException("The timeout was rejected: $name is shut down"))
    return FallbackTimer.after(timer.deadline - System.nanoTime()) { block.run() }
}

/** Whether some core worker's timer is due now (part of the re-scan, [WorkStealingPool.hasVisibleWork]). */
internal fun WorkStealingPool.hasDueTimers(): Boolean {
    var now = 0L
    var read = false
    for (i in 0 until parallelism) {
        val heap = workers.getOrNull(i)?.timers ?: continue
        if (heap.earliest == null) continue
        if (!read) {
            now = System.nanoTime()
            read = true
        }
        if (heap.isDue(now)) return true
    }
    return false
}

/** Whether any timer is pending (quiescence waits for them: they run after shutdown). */
internal fun WorkStealingPool.hasPendingTimers(): Boolean {
    for (i in 0 until parallelism) if (workers.getOrNull(i)?.timers?.earliest != null) return true
    return false
}

/** Shutdown: periodic tasks run no more (as `ScheduledThreadPoolExecutor`'s default policy). */
internal fun WorkStealingPool.stopPeriodicTimers() {
    for (i in 0 until parallelism) {
        workers.getOrNull(i)?.timers?.removeIf({ it.stopsAtShutdown }) { (it as DelayedTask<*>).cancel(false) }
    }
}
