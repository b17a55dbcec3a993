package dev.stealing

import java.util.concurrent.RejectedExecutionException
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicReferenceArray
import java.util.concurrent.atomic.LongAdder
import java.util.concurrent.locks.ReentrantLock
import kotlin.concurrent.withLock
import java.lang.invoke.VarHandle

/**
 * The engine behind [StealingDispatcher]: workers, their deques, the global queue, the idle
 * control and the life cycle. Everything public-facing lives in [StealingDispatcher],
 * [StealingExecutorService] and [ForkedTask]; this class only routes and schedules.
 *
 * Routing ([execute]): a task submitted on one of this pool's workers goes onto that worker's
 * deque, then a full fence and [IdleControl.signalWork] follow; from any other thread it goes
 * to the global queue, whose claiming CAS already orders it before [IdleControl.signalWork]
 * (one volatile read when nobody needs waking).
 *
 * Life cycle ([runState]): RUNNING -> SHUTDOWN (intake closed: the global queue is closed, so an
 * outside submission either got in before and will run, or is rejected; running tasks may
 * still fork locally) -> TIDYING (quiescent: every started worker idle and nothing queued,
 * detected by the last worker to go idle in [tryQuiesce]; workers exit) -> TERMINATED (all
 * workers exited). [stop] goes through STOP instead: queued tasks are handed back and workers
 * exit after their current task.
 * Threads start lazily, one per [IdleControl.signalWork] that finds nobody to wake.
 */
internal class WorkStealingPool(
    val parallelism: Int,
    val name: String,
    val options: StealingOptions,
) {
    init {
        require(parallelism in 1..Ctl.MAX_WORKERS) {
            "parallelism must be in 1..${Ctl.MAX_WORKERS}, was $parallelism"
        }
    }

    val global = GlobalQueue()
    val idle = IdleControl(this)
    val globalCheckInterval = options.globalCheckInterval

    /**
     * Worker slots; power-of-two sized for the odd-stride steal scan. Written under [lock]
     * (release), read with acquire by scans so a re-scan sees every worker started before it.
     */
    val workerTable = AtomicReferenceArray<Worker?>(Integer.highestOneBit(parallelism * 2 - 1).coerceAtLeast(1))

    @Volatile private var runState = RUNNING
    private val lock = ReentrantLock()
    private val terminatedCondition = lock.newCondition()
    private var liveWorkers = 0 // guarded by lock

    val rejected = LongAdder()
    private val externalFailed = LongAdder()

    fun workerAt(index: Int): Worker = workerTable.getAcquire(index)!!

    /** Started workers, for iteration (racy snapshot). */
    private inline fun forEachWorker(action: (Worker) -> Unit) {
        for (i in 0 until workerTable.length()) workerTable.getAcquire(i)?.let(action)
    }

    fun isShutdown(): Boolean = runState >= SHUTDOWN
    /** Workers should exit: STOP (shutdownNow), TIDYING or TERMINATED. */
    fun isStopping(): Boolean = runState >= STOP
    fun isTerminated(): Boolean = runState == TERMINATED

    /** The worker of this pool running the calling code, or null. */
    fun currentWorker(): Worker? {
        val t = Thread.currentThread()
        return if (t is Worker && t.pool === this) t else null
    }

    /**
     * Queues [task]; false (counted in [rejected]) when the pool is shut down and [task] was not
     * taken. Never drops a task it accepted.
     */
    fun execute(task: Runnable): Boolean {
        val w = currentWorker()
        if (w != null) return pushLocal(w, task)
        if (global.offer(task)) {
            signalAfterGlobalOffer()
            return true
        }
        rejected.increment()
        return false
    }

    /** Queues [task] at the back of the global queue (fair: `yield()`), wherever the caller is. */
    fun executeFair(task: Runnable): Boolean {
        if (global.offer(task)) {
            signalAfterGlobalOffer()
            return true
        }
        // Intake is closed, but a worker's own continuations still run until the pool stops.
        val w = currentWorker()
        if (w != null) return pushLocal(w, task)
        rejected.increment()
        return false
    }

    private fun pushLocal(w: Worker, task: Runnable): Boolean {
        if (isStopping()) {
            rejected.increment()
            return false
        }
        w.deque.push(task)
        signalAfterPublish()
        return true
    }

    /**
     * Wakes a worker for a task just offered to the global queue. No explicit fence: the offer
     * claimed its slot with a CAS on the segment's enqueue index, a synchronization action, and
     * a sleeper's re-scan reads that index with a volatile read after its CAS on ctl; the JMM
     * totally orders these, so either the sleeper sees the claimed slot (and keeps searching
     * until it is written) or this volatile read of ctl sees the sleeper (docs/parking.md).
     */
    private fun signalAfterGlobalOffer() {
        idle.signalWork()
    }

    /**
     * Wakes a worker for a task just pushed onto a deque, or re-published after being hidden
     * (see IdleControl for the protocol).
     */
    fun signalAfterPublish() {
        // Dekker fence: the task written above must be visible before ctl is read in
        // signalWork(). Pairs with the fence after the idle push in IdleControl.pushIdle().
        VarHandle.fullFence()
        idle.signalWork()
    }

    /** Whether a re-scan finds any queued task (global or any deque). */
    fun hasVisibleWork(): Boolean {
        if (global.size() > 0) return true
        forEachWorker { if (!it.deque.isEmpty()) return true }
        return false
    }

    /**
     * Called by a worker that went idle after [shutdown] and found nothing: if every started
     * worker is idle (so none runs a task that could fork more) and nothing is queued or being
     * offered, the pool is quiescent: move to TIDYING and wake everyone to exit.
     */
    fun tryQuiesce() {
        if (runState >= STOP) {
            // Stopping or already quiescent: this worker pushed itself idle after the wakeAll
            // of stop() or of the quiescing worker, and must not park. The runState write
            // before that wakeAll and this worker's idle push + fence + read form a Dekker pair.
            idle.wakeAll()
            return
        }
        lock.withLock {
            if (runState != SHUTDOWN || !global.isDrained() || hasVisibleWork()) return
            if (!idle.allIdle(liveWorkers)) return
            runState = TIDYING
        }
        idle.wakeAll()
    }

    /** Starts worker [index]; false if the pool terminated meanwhile. Called by [IdleControl]. */
    fun startWorker(index: Int): Boolean {
        val w = lock.withLock {
            if (runState >= TIDYING) return false
            val w = Worker(this, index)
            workerTable.setRelease(index, w) // pairs with getAcquire in scans
            liveWorkers++
            w
        }
        try {
            w.start()
        } catch (e: Throwable) {
            lock.withLock {
                workerTable.setRelease(index, null)
                liveWorkers--
                tryTerminateLocked()
            }
            throw e
        }
        return true
    }

    fun workerExited(w: Worker) {
        if (isStopping()) rejectLeftovers(w)
        lock.withLock {
            liveWorkers--
            tryTerminateLocked()
        }
    }

    /**
     * Under [lock]: TERMINATED once no worker is alive and the pool is stopping, or shut down
     * with nothing left (a pool that never started a worker).
     */
    private fun tryTerminateLocked() {
        if (liveWorkers != 0 || runState == TERMINATED) return
        if (runState >= STOP || (runState == SHUTDOWN && global.isDrained())) {
            runState = TERMINATED
            terminatedCondition.signalAll()
        }
    }

    /** Stops intake; queued and running work completes, then the workers exit. Idempotent. */
    fun shutdown() {
        advanceRunState(SHUTDOWN)
        global.close()
        if (!global.isDrained()) signalAfterPublish() // tasks queued: make sure a worker runs them
        idle.wakeAll() // idle workers re-check and the last one to go idle again quiesces
        lock.withLock { tryTerminateLocked() }
    }

    /** Stops intake and hands back every task not yet started. */
    fun stop(): List<Runnable> {
        advanceRunState(STOP)
        global.close()
        val unstarted = ArrayList<Runnable>()
        // Until drained, not just until poll() says null: a producer that claimed a slot
        // before the close is still writing its task, which must be handed back too.
        while (!global.isDrained()) {
            val task = global.poll()
            if (task != null) unstarted += task else Thread.onSpinWait()
        }
        forEachWorker { w ->
            while (true) {
                val r = w.deque.steal()
                val task = r.taskOrNull
                if (task != null) unstarted += task else if (r.isEmpty) break
            }
            w.interrupt()
        }
        // A task forked inside the pool may be joined by a running parent: cancel what is
        // handed back so such a join ends (as ForkJoinPool.shutdownNow does).
        for (task in unstarted) if (task is ForkedTask<*>) task.cancel(false)
        idle.wakeAll()
        lock.withLock { tryTerminateLocked() }
        return unstarted
    }

    private fun advanceRunState(target: Int) {
        lock.withLock {
            if (runState < target) runState = target
        }
    }

    /** After [stop], tasks a running task pushed onto its own deque are rejected, not lost. */
    private fun rejectLeftovers(w: Worker) {
        while (true) {
            val task = w.deque.pop() ?: return
            rejectTask(task)
        }
    }

    /**
     * A task that cannot run any more because the pool stopped. A [ForkedTask] is cancelled, a
     * coroutine continuation has its job cancelled and is resumed elsewhere (as kotlinx's own
     * executor dispatchers do), anything else reaches the failure handler with a
     * [RejectedExecutionException].
     */
    fun rejectTask(task: Runnable) {
        rejected.increment()
        when (task) {
            is ForkedTask<*> -> task.cancel(false)
            is kotlin.coroutines.Continuation<*> -> rejectContinuation(task.context, task)
            else -> reportFailure(task, RejectedExecutionException("$name stopped before running $task"))
        }
    }

    fun awaitTermination(nanos: Long): Boolean {
        check(currentWorker() == null) { "a task of $name cannot wait for $name to terminate" }
        var remaining = nanos
        lock.withLock {
            while (runState != TERMINATED) {
                if (remaining <= 0L) return false
                remaining = terminatedCondition.awaitNanos(remaining)
            }
            return true
        }
    }

    /** Waits for termination, then for every worker thread to finish. Not on a worker. */
    fun joinAll() {
        while (!awaitTermination(TimeUnit.SECONDS.toNanos(1))) { /* keep waiting */ }
        forEachWorker { it.join() }
    }

    /** Executor-path failure: the configured handler, or the thread's uncaught-exception handler. */
    fun reportFailure(task: Runnable, e: Throwable) {
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

    fun stats(): StealingStats {
        var executed = 0L; var localPops = 0L; var globalPops = 0L; var stealAttempts = 0L
        var steals = 0L; var parks = 0L; var wakeups = 0L; var inlined = 0L; var helped = 0L
        var blockedJoins = 0L; var failed = externalFailed.sum(); var cancelled = 0L
        val depths = ArrayList<Int>()
        forEachWorker { w ->
            executed += w.executed; localPops += w.localPops; globalPops += w.globalPops
            stealAttempts += w.stealAttempts; steals += w.steals; parks += w.parks
            wakeups += w.wakeups; inlined += w.inlined; helped += w.helped
            blockedJoins += w.blockedJoins; failed += w.failed; cancelled += w.cancelledSkipped
            depths += w.deque.size()
        }
        val live = lock.withLock { liveWorkers }
        return StealingStats(
            name = name, parallelism = parallelism, threads = live, idleThreads = idle.idleCount(),
            executed = executed, localPops = localPops, globalPops = globalPops,
            stealAttempts = stealAttempts, steals = steals, inlined = inlined, helped = helped,
            blockedJoins = blockedJoins, parks = parks, unparks = wakeups, failed = failed, cancelled = cancelled,
            rejected = rejected.sum(), globalQueueDepth = global.size(), workerQueueDepths = depths,
            state = when (runState) {
                RUNNING -> "running"; SHUTDOWN -> "shutting down"; STOP -> "stopping"; TIDYING -> "terminating"; else -> "terminated"
            },
        )
    }

    private companion object {
        const val RUNNING = 0
        const val SHUTDOWN = 1
        const val STOP = 2
        const val TIDYING = 3
        const val TERMINATED = 4
    }
}
