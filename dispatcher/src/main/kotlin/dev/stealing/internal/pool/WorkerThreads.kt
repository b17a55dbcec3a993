package dev.stealing.internal.pool

import dev.stealing.internal.idle.Ctl
import dev.stealing.internal.idle.ParkState
import dev.stealing.internal.jvm.ThreadInjectionEvent
import dev.stealing.internal.jvm.ThreadRetirementEvent
import dev.stealing.internal.worker.Worker
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicReferenceArray
import kotlin.concurrent.withLock

/**
 * The pool's worker slots. Power-of-two sized for the odd-stride steal scan, doubled (copied
 * under the pool's lock) when an extra thread needs a slot beyond it. Slots are written under
 * the pool's lock with release and read with acquire, so a re-scan sees every worker started
 * before it; a worker keeps its slot for life, and a retired worker's slot is reused once its
 * node is off the idle stack.
 */
internal class WorkerTable(parallelism: Int) {
    @Volatile var slots = AtomicReferenceArray<Worker?>(tableSizeFor(parallelism))
        private set

    /** The worker in slot [index], which must be filled (the idle stack only links started workers). */
    operator fun get(index: Int): Worker = slots.getAcquire(index)!!

    /** The worker in slot [index], or null if the slot is empty. */
    fun getOrNull(index: Int): Worker? = slots.getAcquire(index)

    /** Started workers (including retired ones whose slot is not reused yet), for iteration (racy snapshot). */
    inline fun forEach(action: (Worker) -> Unit) {
        val table = slots
        for (i in 0 until table.length()) table.getAcquire(i)?.let(action)
    }

    /** Under the pool's lock: the lowest slot that is empty or holds a retired worker already unlinked; grows the table. */
    fun freeSlotLocked(): Int {
        val table = slots
        for (i in 0 until table.length()) {
            val w = table.get(i)
            if (w == null || w.idleNode.parkState() == ParkState.RETIRED) return i
        }
        val index = table.length()
        if (index >= Ctl.MAX_THREADS) return -1
        val bigger = AtomicReferenceArray<Worker?>(table.length() * 2)
        for (i in 0 until table.length()) bigger.set(i, table.get(i))
        slots = bigger // volatile: scans that read the old table miss only workers not yet started
        return index
    }

    /** Under the pool's lock: puts [w] in its slot; pairs with the getAcquire in scans. */
    fun setLocked(w: Worker) = slots.setRelease(w.index, w)

    /** Under the pool's lock: empties [w]'s slot (its thread could not be started). */
    fun clearLocked(w: Worker) = slots.setRelease(w.index, null)

    private companion object {
        fun tableSizeFor(n: Int): Int = Integer.highestOneBit(n * 2 - 1).coerceAtLeast(1)
    }
}

/**
 * Starts a worker in the lowest free slot (so core slots below `parallelism` fill first);
 * false if the pool terminated meanwhile or no slot is free. Called by [IdleControl] (through
 * [IdleHost]), which has already counted the worker; throws if the thread cannot start.
 */
internal fun WorkStealingPool.startWorker(): Boolean {
    beforeWorkerStart?.run()
    val w = lock.withLock {
        if (runState >= RunState.TIDYING) return false
        val index = workers.freeSlotLocked()
        if (index < 0) return false
        val w = Worker(this, index)
        workers.setLocked(w)
        liveWorkers++
        if (w.isExtra) injected++
        w
    }
    // The monitor starts before the first core worker's thread: the pool cannot terminate before
    // that thread has run and exited, so close(), which joins the monitor once the pool has
    // terminated, never misses a monitor started after it looked.
    if (monitor != null && w.index == 0) {
        try {
            monitor.startOnce()
        } catch (e: Throwable) { // the worker runs; only detection is lost
            reportFailure(Runnable { }, IllegalStateException("$name: cannot start the starvation monitor", e))
        }
    }
    try {
        threadStarter.accept(w)
    } catch (e: Throwable) {
        // A timer placed on this worker between its slot's publication and now would be lost.
        w.timers?.closeAndDrain { it.abandon("The timer was rejected: $name could not start a worker") }
        lock.withLock {
            workers.clearLocked(w)
            liveWorkers--
            if (w.isExtra) injected--
            tryTerminateLocked()
        }
        if (isTerminated()) monitor?.wakeToExit() // it may have been started for this worker
        throw e
    }
    if (w.isExtra) {
        val event = ThreadInjectionEvent()
        if (event.isEnabled) {
            event.pool = name
            event.worker = w.index
            event.commit()
        }
    }
    return true
}

/**
 * Starts every core worker that is not running yet (keyed work needs its worker to exist), and
 * waits until each has its slot.
 */
internal fun WorkStealingPool.startCoreWorkers() {
    while (idle.startOneCoreWorker()) { /* one more */ }
    val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10)
    for (i in 0 until parallelism) {
        while (workers.getOrNull(i) == null) { // another thread may be starting it right now
            if (runState >= RunState.TIDYING) return // keyed offers are rejected then
            check(System.nanoTime() < deadline) { "$name: core worker $i could not be started" }
            Thread.yield()
        }
    }
}

/** Worker [w]'s thread ends, after leaving idle control; [retiredIdle] if it retired idle. */
internal fun WorkStealingPool.workerExited(w: Worker, retiredIdle: Boolean) {
    if (isStopping()) rejectLeftovers(w)
    val quiesced = lock.withLock {
        exitedTotals.add(w) // its counts stay in stats() after it is gone
        w.countersFolded = true
        liveWorkers--
        if (retiredIdle) retired++
        tryTerminateLocked()
        // A retiring worker that was the last non-idle one makes a shut-down pool quiescent.
        retiredIdle && quiesceLocked()
    }
    if (quiesced) wakeAllForExit()
    if (retiredIdle) {
        val event = ThreadRetirementEvent()
        if (event.isEnabled) {
            event.pool = name
            event.worker = w.index
            event.commit()
        }
    }
}
