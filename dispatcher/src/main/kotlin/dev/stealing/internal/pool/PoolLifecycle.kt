package dev.stealing.internal.pool

import dev.stealing.internal.idle.allIdle
import dev.stealing.internal.join.CallerOwnedHalf
import dev.stealing.internal.join.JoinableTask
import dev.stealing.internal.jvm.StackHeadroom
import dev.stealing.internal.timer.DelayedTask
import dev.stealing.internal.timer.Timer
import dev.stealing.internal.worker.Worker
import dev.stealing.internal.worker.WorkerCounters
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger
import java.util.concurrent.locks.ReentrantLock
import kotlin.concurrent.withLock
import kotlin.contracts.ExperimentalContracts
import kotlin.contracts.InvocationKind
import kotlin.contracts.contract

/**
 * The pool's life cycle: it owns the run state ([RunState]), the lock that guards every move
 * of it and the worker counts, and the steps of shutdown, stop, quiescence and termination.
 * Everything here that is "under the lock" is under [lock], and nothing outside this class
 * writes these fields (the worker threads' start and exit go through [WorkerThreads], which
 * calls the `...Locked` methods below inside [locked]).
 */
internal class PoolLifecycle(private val pool: WorkStealingPool) {
    @Volatile var runState = RunState.RUNNING
        private set
    private val lock = ReentrantLock()
    private val terminatedCondition = lock.newCondition()

    /** Live worker threads; guarded by [lock]. */
    var liveWorkers = 0
        private set

    /** Extra threads started (guarded by [lock]). */
    var injected = 0L
        private set

    /** Extra threads retired (guarded by [lock]). */
    var retired = 0L
        private set

    /** Sums of the counters of workers that have exited, so stats only grow; guarded by [lock]. */
    val exitedTotals = WorkerCounters()

    /**
     * Set (volatile) by the [stop] call that moved the pool to STOP once it has taken every
     * queued task it hands back; a worker exiting a stopping pool waits for it before it
     * rejects what is left on its own queues (`TaskRejection.rejectLeftovers`).
     */
    @Volatile private var stopHandBackTaken = false

    /** Tests only: runs in [stop] right after the run state became STOP, before anything is taken. */
    @Volatile var afterStopState: Runnable? = null

    /**
     * Keyed offers and timers from outside the pool in progress; quiescence waits for them (see
     * the pool's `executeKeyed` and `addTimer`). Counted by [countedOutsideOffer] only.
     */
    @JvmField val outsideOffers = AtomicInteger()

    /**
     * Runs [offer] (keyed or a timer, from outside) counted in [outsideOffers], after a reserve of
     * [OUTSIDE_OFFER_FRAMES] calls (about 25 ns): a decrement failing where an overflow cut the
     * offer short would keep a shut-down pool from quiescing (`close()` hung so in the ledger soak).
     * The decrement is two calls deep (fields are [JvmField]s): less than the reserve.
     */
    inline fun <T> countedOutsideOffer(offer: () -> T): T {
        StackHeadroom.reserve(OUTSIDE_OFFER_FRAMES)
        outsideOffers.incrementAndGet()
        try {
            return offer()
        } finally {
            outsideOffers.decrementAndGet()
        }
    }

    fun isShutdown(): Boolean = runState >= RunState.SHUTDOWN

    /** Workers should exit: STOP (shutdownNow), TIDYING or TERMINATED. */
    fun isStopping(): Boolean = runState >= RunState.STOP
    fun isTerminated(): Boolean = runState == RunState.TERMINATED

    /**
     * Runs [block] under [lock], after reserving stack ([StackHeadroom]): a `StackOverflowError`
     * inside `lock()` after it took the lock, or inside `unlock()` before it let go, would leave
     * the lock held for good, and every later start, exit and shutdown of the pool waiting on it.
     * Callers may be deep (a submitter that starts a worker, `close()` from deep code).
     */
    @OptIn(ExperimentalContracts::class)
    inline fun <T> locked(block: () -> T): T {
        contract { callsInPlace(block, InvocationKind.EXACTLY_ONCE) }
        StackHeadroom.reserve()
        return lockForInline().withLock(block)
    }

    /**
     * [locked] without the reserve, for a caller already inside a reserve of its own that must
     * not fail here: the undo of a worker start (`WorkerThreads.startWorker`), whose caller
     * reserved stack before it counted the worker.
     */
    @OptIn(ExperimentalContracts::class)
    inline fun <T> lockedWithinReserve(block: () -> T): T {
        contract { callsInPlace(block, InvocationKind.EXACTLY_ONCE) }
        return lockForInline().withLock(block)
    }

    /** For [locked] only. */
    fun lockForInline(): ReentrantLock = lock

    /** Under [lock]: a worker was given a slot; counted live (and injected, if extra). */
    fun workerAddedLocked(w: Worker) {
        liveWorkers++
        if (w.isExtra) injected++
    }

    /** Under [lock]: the thread of a worker counted by [workerAddedLocked] could not start. */
    fun workerStartUndoneLocked(w: Worker) {
        liveWorkers--
        if (w.isExtra) injected--
        tryTerminateLocked()
    }

    /**
     * Under [lock]: worker [w] exited ([retiredIdle]: retired idle). Its counters join
     * [exitedTotals]. True if the pool became quiescent (the caller wakes everyone to exit).
     */
    fun workerExitedLocked(w: Worker, retiredIdle: Boolean): Boolean {
        exitedTotals.addAll(w.counters) // its counts stay in stats() after it is gone
        w.counters.markFolded()
        liveWorkers--
        if (retiredIdle) retired++
        tryTerminateLocked()
        // A retiring worker that was the last non-idle one makes a shut-down pool quiescent.
        return retiredIdle && quiesceLocked()
    }

    /** Stops intake; queued and running work completes, then the workers exit. Idempotent. */
    fun shutdown() {
        advanceRunState(RunState.SHUTDOWN)
        // Fair queues first: quiescence needs the global queue closed and drained, so once it can
        // happen every fair queue is closed too and re-scans ask each of them (FairRotation,
        // "Quiescence"). In the other order a worker could quiesce the pool between the two closes
        // while a fair queue still took work that would never run.
        pool.fair.closeAll()
        pool.global.close()
        // Every periodic task, wherever it waits (heap, inbox, queued as due), now; a running one
        // when its run ends (PeriodicTasks): as ScheduledThreadPoolExecutor's default policy.
        // One-shot timers still fire; quiescence waits for them. Not after shutdownNow(): the
        // periodic tasks it handed back stay uncancelled (as there), for whoever runs them.
        if (!isStopping()) pool.timers.periodicTasks.cancelAll()
        if (!pool.global.isDrained() || pool.fair.hasWork()) pool.signalAfterPublish() // tasks queued: make sure a worker runs them
        pool.idle.wakeAll() // idle workers re-check and the last one to go idle again quiesces
        locked { tryTerminateLocked() }
        if (isTerminated()) pool.monitor?.wakeToExit()
    }

    /**
     * Stops intake and returns every task not yet started, from every queue (the global queue,
     * the fair queues, each worker's deque, yield queue, keyed queue and timers), except coroutine
     * continuations, whose coroutines are cancelled instead (nobody could resume a handed-back
     * continuation). Delayed and periodic tasks ([DelayedTask]) are handed back uncancelled,
     * wherever they waited (a timer heap, or queued as due), as `ScheduledThreadPoolExecutor`
     * does; forked tasks are cancelled so that joiners end, as `ForkJoinPool` does.
     *
     * Workers that see STOP while this runs wait until it has taken the queues' contents
     * ([awaitStopHandBack]) before they reject what is left on their own: a worker exiting at the
     * same moment would otherwise race it for the same tasks, and what the worker took would be
     * ended instead of handed back.
     */
    fun stop(): List<Runnable> {
        val stopping = advanceRunState(RunState.STOP)
        val unstarted = ArrayList<Runnable>()
        try {
            afterStopState?.run()
            pool.fair.closeAll() // in the order of shutdown()
            pool.global.close()
            pool.fair.drainAll(unstarted)
            // Until drained, not just until poll() says null: a producer that claimed a slot before the
            // close is still writing its task, which must be handed back too.
            while (!pool.global.isDrained()) {
                val task = pool.global.poll()
                if (task != null) unstarted += task else Thread.onSpinWait()
            }
            pool.workers.forEach { w ->
                w.timers?.closeAndDrain { unstarted += it } // closed: a later add is refused to its creator
                // Closed too: a later keyed offer is refused to its producer. Taken here, not by its
                // worker when it exits: that worker may be stuck in a task long after this returns.
                w.keyedQueue?.closeAndTakeAll { unstarted += it }
                for (queue in arrayOf(w.deque, w.yields)) stealAll(queue, unstarted)
            }
        } finally {
            if (stopping) stopHandBackTaken = true // volatile: pairs with the read in awaitStopHandBack()
        }
        pool.workers.forEach { it.interrupt() }
        // A task forked inside the pool may be joined by a running parent: what is handed back is
        // cancelled so such a join ends (as ForkJoinPool.shutdownNow does).
        val handedBack = ArrayList<Runnable>(unstarted.size)
        for (task in unstarted) {
            if (task is DelayedTask<*>) { // before discard(), which would cancel it
                if (!task.isDone) { // one cancelled by shutdown() earlier has ended: not handed back (as STPE)
                    task.handBack()
                    handedBack += task
                }
                continue
            }
            val ended = discard(task, "${pool.label()} stopped")
            when {
                !ended || task is JoinableTask -> handedBack += task
                task is Timer || task is CallerOwnedHalf -> {} // counted by abandon(); run by its caller
                else -> pool.rejected.increment()
            }
        }
        wakeAllForExit()
        locked { tryTerminateLocked() }
        return handedBack
    }

    /**
     * A worker exiting a pool that [stop] moved to STOP: waits until that call has taken every
     * queued task (its timer heap, deque and yield queue included), so what it hands back is not
     * taken by the exiting worker instead. Short: [stop] waits for nobody while it takes them (a
     * producer that claimed a global-queue slot finishes writing it, or leaves it skipped).
     * Not for TIDYING (quiescent: nothing was queued), where no [stop] may ever come.
     */
    fun awaitStopHandBack() {
        if (runState != RunState.STOP) return // TIDYING or TERMINATED: nothing to wait for
        var spins = 0
        while (!stopHandBackTaken) { // volatile: pairs with the write in stop()'s finally
            if (++spins < 64) Thread.onSpinWait() else Thread.yield()
        }
    }

    /** Moves the run state forward to [target]; true if this call moved it. */
    private fun advanceRunState(target: Int): Boolean =
        locked {
            if (runState < target) {
                runState = target
                true
            } else {
                false
            }
        }

    /**
     * Called by a worker that went idle after [shutdown] and found nothing: if every started worker
     * is idle (so none runs a task that could fork more) and nothing is queued or being offered,
     * the pool is quiescent: move to TIDYING and wake everyone to exit.
     */
    fun tryQuiesce() {
        if (runState >= RunState.STOP) {
            // Stopping or already quiescent: this worker pushed itself idle after the wakeAll of
            // stop() or of the quiescing worker, and must not park. The runState write before that
            // wakeAll and this worker's idle push + fence + read form a Dekker pair.
            pool.idle.wakeAll()
            return
        }
        if (locked { quiesceLocked() }) wakeAllForExit()
    }

    /**
     * Under [lock]: moves a shut-down pool with nothing queued, no timer pending
     * and every live worker idle to TIDYING.
     */
    fun quiesceLocked(): Boolean {
        if (runState != RunState.SHUTDOWN || !pool.global.isDrained() || pool.hasVisibleWork() || pool.timers.hasPendingTimers()) return false
        if (!pool.idle.allIdle(liveWorkers) {
                !pool.hasVisibleWork() && outsideOffers.get() == 0 && !pool.hasKeyedWork() && !pool.timers.hasPendingTimers()
            }) {
            return false
        }
        runState = RunState.TIDYING
        return true
    }

    fun wakeAllForExit() {
        pool.idle.wakeAll()
        pool.monitor?.wakeToExit()
    }

    /**
     * Under [lock]: TERMINATED once no worker is alive and the pool is stopping,
     * or shut down with nothing left (a pool that never started a worker). Nothing left means the
     * global queue drained and no fair queue holding a task: a submitter whose fair-queue offer got
     * in before the close may still be on its way to start the first worker (its signal counted a
     * start that has not taken this lock yet), and a pool terminated meanwhile would refuse that
     * start and strand its task. Both queues are closed by then, so nothing new can arrive.
     */
    fun tryTerminateLocked() {
        if (liveWorkers != 0 || runState == RunState.TERMINATED) return
        if (runState >= RunState.STOP || (runState == RunState.SHUTDOWN && pool.global.isDrained() && !pool.fair.hasWork())) {
            runState = RunState.TERMINATED
            terminatedCondition.signalAll()
            pool.monitor?.wakeToExit() // it finishes wake-ups until termination (an unpark: safe under the lock)
        }
    }

    /**
     * Waits up to [nanos] for TERMINATED; true if reached. Zero or negative: no wait. Throws
     * [InterruptedException] (undeclared) if interrupted while waiting.
     */
    fun awaitTermination(nanos: Long): Boolean {
        if (runState == RunState.TERMINATED) return true
        if (nanos <= 0L) return false
        check(pool.currentWorker() == null) { "a task of ${pool.name} cannot wait for ${pool.name} to terminate" }
        var remaining = nanos
        locked {
            while (runState != RunState.TERMINATED) {
                if (remaining <= 0L) return false
                remaining = terminatedCondition.awaitNanos(remaining)
            }
            return true
        }
    }

    /**
     * Waits for termination, then for every worker thread and the starvation monitor's thread to
     * finish. Not on a worker. An interrupt does not end the wait; it is re-asserted on return (as
     * JDK 19+ `ExecutorService.close()` does).
     */
    fun joinAll() {
        var interrupted = false
        while (true) {
            try {
                while (!awaitTermination(TimeUnit.SECONDS.toNanos(1))) { /* keep waiting */ }
                pool.workers.forEach { it.join() }
                pool.monitor?.joinIfStarted() // started before the first worker (startWorker), so seen here
                break
            } catch (e: InterruptedException) {
                interrupted = true
            }
        }
        if (interrupted) Thread.currentThread().interrupt()
    }

    companion object {
        const val OUTSIDE_OFFER_FRAMES = 32 // 16 real frames or more compiled, about 3 KB interpreted
    }
}
