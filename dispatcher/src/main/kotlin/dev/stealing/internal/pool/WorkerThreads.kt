package dev.stealing.internal.pool

import dev.stealing.internal.jvm.ThreadInjectionEvent
import dev.stealing.internal.jvm.ThreadRetirementEvent
import dev.stealing.internal.jvm.jfrStarted
import dev.stealing.internal.worker.Worker
import java.util.concurrent.TimeUnit
import java.util.function.Consumer

/**
 * Starting a worker's thread and its exit: the worker table's slots, the pool's counts (through
 * [PoolLifecycle], under its lock) and the JFR events of injection and retirement.
 */
internal class WorkerThreads(private val pool: WorkStealingPool) {
    private val lifecycle get() = pool.lifecycle

    /** Tests only: runs when [startWorker] begins, before it takes the lock. */
    @Volatile var beforeWorkerStart: Runnable? = null

    /** Starts a worker's thread ([startWorker]); tests replace it to make a start fail. */
    @Volatile var threadStarter: Consumer<Thread> = Consumer { it.start() }

    /**
     * Starts a worker in the lowest free slot (so core slots below `parallelism` fill first);
     * false if the pool terminated meanwhile or no slot is free. Called by idle control
     * (through the pool as its `IdleHost`), which has already counted the worker; throws if
     * the thread cannot start.
     */
    fun startWorker(): Boolean {
        beforeWorkerStart?.run()
        val workers = pool.workers
        val w = lifecycle.locked {
            if (lifecycle.runState >= RunState.TIDYING) return false
            val index = workers.freeSlotLocked()
            if (index < 0) return false
            val w = Worker(pool, index)
            workers.setLocked(w)
            lifecycle.workerAddedLocked(w)
            w
        }
        // The monitor starts before the first core worker's thread: the pool cannot terminate before
        // that thread has run and exited, so close(), which joins the monitor once the pool has
        // terminated, never misses a monitor started after it looked.
        val monitor = pool.monitor
        if (monitor != null && w.index == 0) {
            try {
                monitor.startOnce()
            } catch (e: Throwable) { // the worker runs; only detection is lost
                pool.reportFailure(Runnable { }, IllegalStateException("${pool.name}: cannot start the starvation monitor", e))
            }
        }
        try {
            threadStarter.accept(w)
        } catch (e: Throwable) {
            // A timer placed on this worker between its slot's publication and now would be lost.
            w.timers?.closeAndDrain { it.abandon("The timer was rejected: ${pool.name} could not start a worker") }
            // Within the reserve of idle control, which reserved stack before it counted this
            // worker: a reserve of its own here could fail now that the slot is taken.
            lifecycle.lockedWithinReserve {
                workers.clearLocked(w)
                lifecycle.workerStartUndoneLocked(w)
            }
            if (lifecycle.isTerminated()) monitor?.wakeToExit() // it may have been started for this worker
            throw e
        }
        // Started: from here this must return true, or idle control would undo the count of a
        // running worker. The event is only a record; an Error while making it loses the record.
        if (w.isExtra && jfrStarted()) {
            try {
                val event = ThreadInjectionEvent()
                if (event.isEnabled) {
                    event.pool = pool.name
                    event.worker = w.index
                    event.commit()
                }
            } catch (_: Throwable) {
            }
        }
        return true
    }

    /**
     * Starts every core worker that is not running yet (keyed work needs its worker to exist), and
     * waits until each has its slot.
     */
    fun startCoreWorkers() {
        while (pool.idle.startOneCoreWorker()) { /* one more */ }
        val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10)
        for (i in 0 until pool.parallelism) {
            while (pool.workers.getOrNull(i) == null) { // another thread may be starting it right now
                if (lifecycle.runState >= RunState.TIDYING) return // keyed offers are rejected then
                check(System.nanoTime() < deadline) { "${pool.name}: core worker $i could not be started" }
                Thread.yield()
            }
        }
    }

    /** Worker [w]'s thread ends, after leaving idle control; [retiredIdle] if it retired idle. */
    fun workerExited(w: Worker, retiredIdle: Boolean) {
        if (lifecycle.isStopping()) pool.rejection.rejectLeftovers(w)
        val quiesced = lifecycle.locked { lifecycle.workerExitedLocked(w, retiredIdle) }
        if (quiesced) lifecycle.wakeAllForExit()
        if (retiredIdle && jfrStarted()) {
            val event = ThreadRetirementEvent()
            if (event.isEnabled) {
                event.pool = pool.name
                event.worker = w.index
                event.commit()
            }
        }
    }
}
