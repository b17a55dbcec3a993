package dev.stealing.internal.pool

import dev.stealing.internal.idle.BlockState
import dev.stealing.internal.idle.idleCount
import dev.stealing.internal.jvm.TaskFailureEvent
import dev.stealing.internal.jvm.jfrStarted
import dev.stealing.internal.worker.Worker
import dev.stealing.internal.worker.WorkerCounters
import java.util.concurrent.atomic.LongAdder

/**
 * The pool's statistics: the snapshot behind `stats()`, and failure reporting (which counts
 * failures off the workers). Per-worker counters ([WorkerCounters]) are read racily from live
 * workers and added, under the life cycle's lock, to the sums of workers that have exited
 * ([PoolLifecycle.exitedTotals]), so every counter only grows, whichever threads come and go.
 */
internal class PoolStats(private val pool: WorkStealingPool) {
    /** Tasks that failed on a thread that is not a worker (a caller running a rejected task, say). */
    private val externalFailed = LongAdder()

    /** A snapshot of the pool's counters (see the class comment). */
    fun snapshot(): PoolSnapshot {
        val t = WorkerCounters()
        val lifecycle = pool.lifecycle
        var blocked = 0
        val depths = ArrayList<Int>()
        val keyedDepths = ArrayList<Int>()
        val timerDepths = ArrayList<Int>()
        val live: Int; val injectedNow: Long; val retiredNow: Long; val state: Int
        lifecycle.locked {
            t.addAll(lifecycle.exitedTotals)
            pool.workers.forEach { w ->
                if (w.counters.folded) return@forEach // exited: counted in exitedTotals
                val b = w.idleNode.blockState
                if (BlockState.isBlocked(b)) blocked++
                w.keyedQueue?.let { keyedDepths += it.size() }
                w.timers?.let { timerDepths += it.pendingCount() }
                depths += w.queuedTasks()
                t.addAll(w.counters)
            }
            live = lifecycle.liveWorkers; injectedNow = lifecycle.injected; retiredNow = lifecycle.retired; state = lifecycle.runState
        }
        val pinnedCpus = ArrayList<Int>()
        pool.workers.forEach { if (!it.isExtra && it.pinnedCpu >= 0) pinnedCpus += it.pinnedCpu }
        return PoolSnapshot(
            name = pool.name, parallelism = pool.parallelism, threads = live, idleThreads = pool.idle.idleCount(),
            blockedThreads = blocked, maxThreads = pool.maxThreads, injectedThreads = injectedNow,
            retiredThreads = retiredNow, presumedBlocked = pool.monitor?.presumedCount ?: 0L,
            executed = t.executed, localPops = t.localPops, globalPops = t.globalPops,
            stealAttempts = t.stealAttempts, steals = t.steals, inlined = t.inlined, helped = t.helped,
            blockedJoins = t.blockedJoins, parks = t.parks, unparks = t.wakeups,
            failed = t.failed + externalFailed.sum(), cancelled = t.cancelledSkipped,
            rejected = pool.rejected.sum(), globalQueueDepth = pool.global.size(), workerQueueDepths = depths,
            affinityPops = t.keyedPops, affinityQueueDepths = keyedDepths,
            forks = t.forks + pool.forksFromOutside.sum(), forksInlined = t.forksInlined, forksStolen = t.forksStolen,
            loopPieces = t.loopPieces, loopSplits = t.loopSplits,
            fairQueues = pool.fair.queues().map { (it as FairQueue).snapshot() }, // the pool registers only its own
            pendingTimers = timerDepths, timersFromOutside = pool.timers.timersFromOutside.sum(), timersFired = t.timersFired,
            timersStolen = t.timersStolen, timersCancelled = t.timersCancelled + pool.timers.timersCancelled.sum(),
            pinThreads = pool.config.pinThreads, pinnedCpus = pinnedCpus, pinningFailure = pool.pinningFailure,
            runState = state,
        )
    }

    /**
     * A task failed on the executor path (or could not run): the configured handler, or else the
     * thread's uncaught-exception handler. A failing handler is ignored: it must not kill a worker.
     */
    fun reportFailure(task: Runnable, e: Throwable) {
        if (Thread.currentThread() !is Worker) externalFailed.increment()
        if (jfrStarted()) {
            val event = TaskFailureEvent()
            if (event.isEnabled) {
                event.pool = pool.name
                event.taskClass = task.javaClass.name
                event.exceptionClass = e.javaClass.name
                event.message = e.message
                event.commit()
            }
        }
        try {
            val handler = pool.config.failureHandler
            if (handler != null) {
                handler.accept(task, e)
            } else {
                val t = Thread.currentThread()
                t.uncaughtExceptionHandler?.uncaughtException(t, e)
            }
        } catch (ignored: Throwable) {
            // A failing handler must not kill the worker either.
        }
    }
}
