package dev.stealing.internal.pool

import dev.stealing.StealingStats
import dev.stealing.internal.idle.BlockState
import dev.stealing.internal.idle.idleCount
import dev.stealing.internal.jvm.TaskFailureEvent
import dev.stealing.internal.worker.Worker
import kotlin.concurrent.withLock

/**
 * A snapshot of the pool's counters. Per-worker counters are read racily from live workers and
 * added, under the pool's lock, to the totals of workers that have exited
 * ([WorkStealingPool.exitedTotals]), so every counter only grows, whichever threads come and go.
 */
internal fun WorkStealingPool.stats(): StealingStats {
    val t = WorkerTotals()
    var blocked = 0
    val depths = ArrayList<Int>()
    val keyedDepths = ArrayList<Int>()
    val timerDepths = ArrayList<Int>()
    val live: Int; val injectedNow: Long; val retiredNow: Long; val state: Int
    lock.withLock {
        t.addAll(exitedTotals)
        workers.forEach { w ->
            if (w.countersFolded) return@forEach // exited: counted in exitedTotals
            val b = w.idleNode.blockState
            if (BlockState.isBlocked(b)) blocked++
            w.keyedQueue?.let { keyedDepths += it.size() }
            w.timers?.let { timerDepths += it.pendingCount() }
            depths += w.queuedTasks()
            t.add(w)
        }
        live = liveWorkers; injectedNow = injected; retiredNow = retired; state = runState
    }
    return StealingStats(
        name = name, parallelism = parallelism, threads = live, idleThreads = idle.idleCount(),
        blockedThreads = blocked, maxThreads = maxThreads, injectedThreads = injectedNow,
        retiredThreads = retiredNow, presumedBlocked = monitor?.presumedCount ?: 0L,
        executed = t.executed, localPops = t.localPops, globalPops = t.globalPops,
        stealAttempts = t.stealAttempts, steals = t.steals, inlined = t.inlined, helped = t.helped,
        blockedJoins = t.blockedJoins, parks = t.parks, unparks = t.wakeups,
        failed = t.failed + externalFailed.sum(), cancelled = t.cancelledSkipped,
        rejected = rejected.sum(), globalQueueDepth = global.size(), workerQueueDepths = depths,
        affinityPops = t.keyedPops, affinityQueueDepths = keyedDepths,
        forks = t.forks, forksInlined = t.forksInlined, forksStolen = t.forksStolen,
        fairQueues = fair.queues().map { it.stats() },
        pendingTimers = timerDepths, timersFromOutside = timersFromOutside.sum(), timersFired = t.timersFired,
        timersStolen = t.timersStolen, timersCancelled = t.timersCancelled + timersCancelled.sum(),
        pinning = pinningSummary(),
        state = when (state) {
            RunState.RUNNING -> StealingStats.State.RUNNING
            RunState.SHUTDOWN -> StealingStats.State.SHUTTING_DOWN
            RunState.STOP -> StealingStats.State.STOPPING
            RunState.TIDYING -> StealingStats.State.TERMINATING
            else -> StealingStats.State.TERMINATED
        },
    )
}

/** Off, or which core workers are pinned to which CPUs, or why pinning did not take. */
private fun WorkStealingPool.pinningSummary(): StealingStats.Pinning {
    if (!options.pinThreads) return StealingStats.Pinning(StealingStats.Pinning.Mode.OFF, emptyList(), null)
    val cpus = ArrayList<Int>()
    workers.forEach { if (!it.isExtra && it.pinnedCpu >= 0) cpus += it.pinnedCpu }
    val failure = pinningFailure
    val mode = when {
        failure != null && cpus.isEmpty() -> StealingStats.Pinning.Mode.OFF
        failure != null -> StealingStats.Pinning.Mode.PARTIAL
        else -> StealingStats.Pinning.Mode.ON
    }
    return StealingStats.Pinning(mode, cpus, failure)
}

/**
 * A task failed on the executor path (or could not run): the configured handler, or else the
 * thread's uncaught-exception handler. A failing handler is ignored: it must not kill a worker.
 */
internal fun WorkStealingPool.reportFailure(task: Runnable, e: Throwable) {
    if (Thread.currentThread() !is Worker) externalFailed.increment()
    val event = TaskFailureEvent()
    if (event.isEnabled) {
        event.pool = name
        event.taskClass = task.javaClass.name
        event.exceptionClass = e.javaClass.name
        event.message = e.message
        event.commit()
    }
    try {
        val handler = options.exceptionHandler
        if (handler != null) {
            handler.handleException(task, e)
        } else {
            val t = Thread.currentThread()
            t.uncaughtExceptionHandler?.uncaughtException(t, e)
        }
    } catch (ignored: Throwable) {
        // A failing handler must not kill the worker either.
    }
}

/** Sums of the per-worker counters, for [stats]. */
internal class WorkerTotals {
    var executed = 0L; var localPops = 0L; var globalPops = 0L; var stealAttempts = 0L
    var steals = 0L; var parks = 0L; var wakeups = 0L; var inlined = 0L; var helped = 0L
    var blockedJoins = 0L; var failed = 0L; var cancelledSkipped = 0L; var keyedPops = 0L
    var forks = 0L; var forksInlined = 0L; var forksStolen = 0L
    var timersFired = 0L; var timersStolen = 0L; var timersCancelled = 0L

    /** Adds [w]'s counters (racy reads of the owner's plain fields). */
    fun add(w: Worker) {
        executed += w.executed; localPops += w.localPops; globalPops += w.globalPops
        stealAttempts += w.stealAttempts; steals += w.steals; parks += w.parks; wakeups += w.wakeups
        inlined += w.inlined; helped += w.helped; blockedJoins += w.blockedJoins; failed += w.failed
        cancelledSkipped += w.cancelledSkipped; keyedPops += w.keyedPops
        forks += w.forks; forksInlined += w.forksInlined; forksStolen += w.forksStolen
        timersFired += w.timersFired; timersStolen += w.timersStolen; timersCancelled += w.timersCancelled
    }

    fun addAll(o: WorkerTotals) {
        executed += o.executed; localPops += o.localPops; globalPops += o.globalPops
        stealAttempts += o.stealAttempts; steals += o.steals; parks += o.parks; wakeups += o.wakeups
        inlined += o.inlined; helped += o.helped; blockedJoins += o.blockedJoins; failed += o.failed
        cancelledSkipped += o.cancelledSkipped; keyedPops += o.keyedPops
        forks += o.forks; forksInlined += o.forksInlined; forksStolen += o.forksStolen
        timersFired += o.timersFired; timersStolen += o.timersStolen; timersCancelled += o.timersCancelled
    }
}
