package dev.stealing.internal.pool

import dev.stealing.ForkedTask
import dev.stealing.internal.idle.allIdle
import dev.stealing.internal.join.ForkHalf
import dev.stealing.internal.timer.DelayedTask
import dev.stealing.internal.timer.Timer
import dev.stealing.internal.worker.Worker
import java.util.concurrent.RejectedExecutionException
import java.util.concurrent.TimeUnit
import kotlin.concurrent.withLock

/**
 * The pool's life cycle ([WorkStealingPool.runState]), in order; it only moves forward.
 *
 * - RUNNING: takes work.
 * - SHUTDOWN ([shutdown]): intake closed. The global and fair queues are closed, so an outside
 *   submission either got in before and will run, or is rejected; running tasks may still fork
 *   locally. Workers keep running everything queued.
 * - STOP ([stop], `shutdownNow`): queued tasks are handed back or discarded; workers exit after
 *   their current task.
 * - TIDYING: quiescent after SHUTDOWN (every live worker idle and nothing queued, found by the
 *   last worker to go idle in [tryQuiesce]); workers exit.
 * - TERMINATED: no worker is alive.
 */
internal object RunState {
    const val RUNNING = 0
    const val SHUTDOWN = 1
    const val STOP = 2
    const val TIDYING = 3
    const val TERMINATED = 4
}

/**
 * Ends a queued [task] that will never run because [why]: a [ForkedTask] or a [DelayedTask] is
 * cancelled (so its joiners end), a coroutine continuation has its job cancelled and completes
 * on `Dispatchers.IO` (as kotlinx's executor dispatchers do on rejection), a coroutine timer is
 * abandoned ([Timer.abandon]), a `forkJoin` half is dropped (its caller, which is still running
 * or has a continuation of its own, takes it back). Returns false, doing nothing, for any other
 * `Runnable`: the caller hands it back, reports it or drops it.
 */
internal fun discard(task: Runnable, why: String): Boolean = when (task) {
    is ForkedTask<*> -> {
        task.cancel(false)
        true
    }
    is kotlin.coroutines.Continuation<*> -> {
        rejectContinuation(task.context, task, why)
        true
    }
    is Timer -> { // a due timer, queued to fire: a Java task is cancelled (and handed back)
        task.abandon(why)
        true
    }
    // Its caller takes it back (ForkJoin.kt): it is still unclaimed, or a dead entry.
    is ForkHalf<*> -> true
    else -> false
}

/** Stops intake; queued and running work completes, then the workers exit. Idempotent. */
internal fun WorkStealingPool.shutdown() {
    advanceRunState(RunState.SHUTDOWN)
    // Fair queues first: quiescence needs the global queue closed and drained, so once it can
    // happen every fair queue is closed too and re-scans ask each of them (FairRotation,
    // "Quiescence"). In the other order a worker could quiesce the pool between the two closes
    // while a fair queue still took work that would never run.
    fair.closeAll()
    global.close()
    // Every periodic task, wherever it is (heap, inbox, queued as due, running): as
    // ScheduledThreadPoolExecutor's default policy. One-shot timers still fire; quiescence waits for them.
    periodicTasks.cancelAll()
    if (!global.isDrained() || fair.hasWork()) signalAfterPublish() // tasks queued: make sure a worker runs them
    idle.wakeAll() // idle workers re-check and the last one to go idle again quiesces
    lock.withLock { tryTerminateLocked() }
    if (isTerminated()) monitor?.wakeToExit()
}

/**
 * Stops intake and returns every task not yet started, except coroutine continuations, whose
 * coroutines are cancelled instead (nobody could resume a handed-back continuation). Delayed
 * and periodic tasks ([DelayedTask]) are handed back uncancelled, wherever they waited (a timer
 * heap, or queued as due), as `ScheduledThreadPoolExecutor` does; forked tasks are cancelled so
 * that joiners end, as `ForkJoinPool` does.
 *
 * Workers that see STOP while this runs wait until it has taken the queues' contents
 * ([awaitStopHandBack]) before they reject what is left on their own: a worker exiting at the
 * same moment would otherwise race it for the same tasks, and what the worker took would be
 * ended instead of handed back.
 */
internal fun WorkStealingPool.stop(): List<Runnable> {
    val stopping = advanceRunState(RunState.STOP)
    val unstarted = ArrayList<Runnable>()
    try {
        afterStopState?.run()
        fair.closeAll() // in the order of shutdown()
        global.close()
        fair.drainAll(unstarted)
        // Until drained, not just until poll() says null: a producer that claimed a slot before the
        // close is still writing its task, which must be handed back too.
        while (!global.isDrained()) {
            val task = global.poll()
            if (task != null) unstarted += task else Thread.onSpinWait()
        }
        workers.forEach { w ->
            w.timers?.closeAndDrain { unstarted += it } // closed: a later add is refused to its creator
            for (queue in arrayOf(w.deque, w.yields)) {
                while (true) {
                    val r = queue.steal()
                    val task = r.taskOrNull
                    // Retry: a lost race, or the owner (still running) mid-removal; it is brief.
                    if (task != null) unstarted += task else if (r.isEmpty) break else Thread.onSpinWait()
                }
            }
        }
    } finally {
        if (stopping) stopHandBackTaken = true // volatile: pairs with the read in awaitStopHandBack()
    }
    workers.forEach { it.interrupt() }
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
        val ended = discard(task, "The task was rejected: $name stopped")
        when {
            !ended || task is ForkedTask<*> -> handedBack += task
            task is Timer || task is ForkHalf<*> -> {} // counted by abandon(); run by its caller
            else -> rejected.increment()
        }
    }
    wakeAllForExit()
    lock.withLock { tryTerminateLocked() }
    return handedBack
}

/**
 * A worker exiting a pool that [stop] moved to STOP: waits until that call has taken every
 * queued task (its timer heap, deque and yield queue included), so what it hands back is not
 * taken by the exiting worker instead. Short: [stop] waits for nobody while it takes them (a
 * producer that claimed a global-queue slot finishes writing it, or leaves it skipped).
 * Not for TIDYING (quiescent: nothing was queued), where no [stop] may ever come.
 */
private fun WorkStealingPool.awaitStopHandBack() {
    if (runState != RunState.STOP) return // TIDYING or TERMINATED: nothing to wait for
    var spins = 0
    while (!stopHandBackTaken) { // volatile: pairs with the write in stop()'s finally
        if (++spins < 64) Thread.onSpinWait() else Thread.yield()
    }
}

/** Moves the run state forward to [target]; true if this call moved it. */
private fun WorkStealingPool.advanceRunState(target: Int): Boolean =
    lock.withLock {
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
internal fun WorkStealingPool.tryQuiesce() {
    if (runState >= RunState.STOP) {
        // Stopping or already quiescent: this worker pushed itself idle after the wakeAll of
        // stop() or of the quiescing worker, and must not park. The runState write before that
        // wakeAll and this worker's idle push + fence + read form a Dekker pair.
        idle.wakeAll()
        return
    }
    if (lock.withLock { quiesceLocked() }) wakeAllForExit()
}

/**
 * Under [WorkStealingPool.lock]: moves a shut-down pool with nothing queued, no timer pending
 * and every live worker idle to TIDYING.
 */
internal fun WorkStealingPool.quiesceLocked(): Boolean {
    if (runState != RunState.SHUTDOWN || !global.isDrained() || hasVisibleWork() || hasPendingTimers()) return false
    if (!idle.allIdle(liveWorkers) {
            !hasVisibleWork() && outsideOffers.get() == 0 && !hasKeyedWork() && !hasPendingTimers()
        }) {
        return false
    }
    runState = RunState.TIDYING
    return true
}

internal fun WorkStealingPool.wakeAllForExit() {
    idle.wakeAll()
    monitor?.wakeToExit()
}

/**
 * Under [WorkStealingPool.lock]: TERMINATED once no worker is alive and the pool is stopping,
 * or shut down with nothing left (a pool that never started a worker). Nothing left means the
 * global queue drained and no fair queue holding a task: a submitter whose fair-queue offer got
 * in before the close may still be on its way to start the first worker (its signal counted a
 * start that has not taken this lock yet), and a pool terminated meanwhile would refuse that
 * start and strand its task. Both queues are closed by then, so nothing new can arrive.
 */
internal fun WorkStealingPool.tryTerminateLocked() {
    if (liveWorkers != 0 || runState == RunState.TERMINATED) return
    if (runState >= RunState.STOP || (runState == RunState.SHUTDOWN && global.isDrained() && !fair.hasWork())) {
        runState = RunState.TERMINATED
        terminatedCondition.signalAll()
    }
}

/**
 * When [w] exits a stopping pool, once [stop] has taken what it hands back
 * ([awaitStopHandBack]): tasks it pushed onto its own deque or yield queue after [stop] took
 * their contents, and tasks in its keyed queue, are rejected, not lost. The keyed queue is
 * closed first, so a keyed offer racing this exit is either drained here or refused to its
 * producer ([WorkStealingPool.executeKeyed]). Its timer heap is closed and drained the same
 * way: a timer added before the close is abandoned here ([Timer.abandon]), a later one is
 * refused to its creator ([addTimer]).
 */
internal fun WorkStealingPool.rejectLeftovers(w: Worker) {
    awaitStopHandBack()
    while (true) rejectTask(w.deque.pop() ?: break)
    while (true) rejectTask(w.yields.pop() ?: break)
    w.keyedQueue?.drainClosed { rejectTask(it) }
    w.timers?.closeAndDrain { it.abandon("The timer was rejected: $name stopped") }
}

/**
 * A task that cannot run any more because the pool stopped (or, with [startFailure], because
 * no worker could be started): [discard]ed, and anything else reaches the failure handler with
 * a [RejectedExecutionException].
 */
internal fun WorkStealingPool.rejectTask(task: Runnable, startFailure: Throwable? = null) {
    rejected.increment()
    val why = if (startFailure == null) "$name stopped" else "$name could not start a worker"
    if (!discard(task, "The task was rejected: $why")) {
        reportFailure(task, RejectedExecutionException("$why before running $task", startFailure))
    }
}

/**
 * A worker could not be started and none is alive: the tasks waiting in the global queue and
 * the fair queues would never run, so each is rejected ([rejectTask], with [cause]) instead of
 * being stranded. A later submission tries to start a worker again.
 */
internal fun WorkStealingPool.rejectQueuedWithoutWorkers(cause: Throwable) {
    // One drainer at a time: taking a fair queue's turn signals, and that signal's failed start
    // would call this again on the same thread. A caller that finds a drain under way leaves its
    // task to it: the drainer re-checks the queues after it lets go.
    while (rejectingStranded.compareAndSet(false, true)) {
        try {
            while (true) rejectTask(global.poll() ?: fair.poll() ?: break, startFailure = cause)
        } finally {
            rejectingStranded.set(false)
        }
        // A shutdown that came while the start was failing could not terminate the pool (the
        // worker was counted, then the queues held work): with both now empty, it can.
        if (isShutdown()) {
            lock.withLock { tryTerminateLocked() }
            if (isTerminated()) monitor?.wakeToExit()
        }
        if (idle.liveCount != 0 || (global.size() == 0 && !fair.hasWork())) return
    }
}

/**
 * Waits up to [nanos] for TERMINATED; true if reached. Zero or negative: no wait. Throws
 * [InterruptedException] (undeclared) if interrupted while waiting.
 */
internal fun WorkStealingPool.awaitTermination(nanos: Long): Boolean {
    if (runState == RunState.TERMINATED) return true
    if (nanos <= 0L) return false
    check(currentWorker() == null) { "a task of $name cannot wait for $name to terminate" }
    var remaining = nanos
    lock.withLock {
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
internal fun WorkStealingPool.joinAll() {
    var interrupted = false
    while (true) {
        try {
            while (!awaitTermination(TimeUnit.SECONDS.toNanos(1))) { /* keep waiting */ }
            workers.forEach { it.join() }
            monitor?.joinIfStarted() // started before the first worker (startWorker), so seen here
            break
        } catch (e: InterruptedException) {
            interrupted = true
        }
    }
    if (interrupted) Thread.currentThread().interrupt()
}
