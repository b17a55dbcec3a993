package dev.stealing.internal.pool

import dev.stealing.internal.join.JoinableTask
import dev.stealing.internal.idle.ParkState
import dev.stealing.internal.timer.nanosOrNever
import dev.stealing.internal.worker.PoolConfig
import dev.stealing.internal.worker.Worker
import dev.stealing.internal.worker.WorkerHost
import java.lang.invoke.VarHandle
import java.util.concurrent.atomic.AtomicInteger
import java.util.concurrent.atomic.LongAdder
import java.util.concurrent.locks.LockSupport

/**
 * The engine behind `StealingDispatcher`: its parts, and where a task goes. Nothing here is
 * public; the public API is the package `dev.stealing` (docs/design.md, "Packages").
 *
 * The pool's jobs, one owner each:
 * - routing and publication (this class): [execute], [fork], [executeYield], [executeKeyed],
 *   and the two signal methods every publication goes through ([WorkerHost]);
 * - the life cycle and quiescence ([lifecycle]: it owns the run state, the lock and the worker
 *   counts), and what happens to a task that will never run (`Rejection.kt`);
 * - starting worker threads and their exit ([threads]);
 * - timers: where a timer goes, and the pool's side of them ([timers]);
 * - statistics and failure reporting ([PoolStats]);
 * - what the workers see of the pool ([WorkerHost], which this class extends), and who sleeps
 *   and who is woken ([IdleControl], which sees the pool only as an [IdleHost]).
 *
 * Routing ([execute]): a task submitted on one of this pool's workers goes onto that worker's
 * deque, then a full fence and [IdleControl.signalWork] follow; from any other thread it goes
 * to the global queue, whose claiming CAS already orders it before [IdleControl.signalWork]
 * (one volatile read when nobody needs waking).
 */
internal class WorkStealingPool(
    parallelism: Int,
    name: String,
    config: PoolConfig,
    threadContextClassLoader: ClassLoader? = Thread.currentThread().contextClassLoader,
) : WorkerHost(parallelism, name, config, threadContextClassLoader) {
    /** Watches for workers stuck in tasks while work waits; null if disabled. Started with the first worker. */
    val monitor: StarvationMonitor? = nanosOrNever(config.starvationInterval).let { interval ->
        if (interval == 0L || interval == Long.MAX_VALUE) null else StarvationMonitor(this, interval)
    }

    // What idle control needs besides the worker's node (IdleHost; WorkerHost provides idleNode).
    override fun startWorker(): Boolean = threads.startWorker()

    override fun workerStartFailed(cause: Throwable, noneLive: Boolean) {
        reportFailure(Runnable { }, IllegalStateException("$name: cannot start a worker", cause))
        // With no live worker, nobody would ever run what is queued: reject it instead.
        if (noneLive) rejection.rejectQueuedWithoutWorkers(cause)
    }

    override fun workerActivated() {
        monitor?.onPoolActive()
    }

    /** The run state, the lock and the worker counts, and shutdown, stop and termination. */
    @JvmField val lifecycle = PoolLifecycle(this)

    /** Starting worker threads and their exit. */
    val threads = WorkerThreads(this)

    /** Ending the tasks that will never run: after a stop, or when no worker can start. */
    val rejection = TaskRejection(this)

    /** Where timers go, and the pool's side of them. */
    val timers = PoolTimers(this)

    /** Tasks refused (submission after shutdown) or discarded unrun. */
    val rejected = LongAdder()

    override fun isShutdown(): Boolean = lifecycle.isShutdown()
    override fun isStopping(): Boolean = lifecycle.isStopping()
    fun isTerminated(): Boolean = lifecycle.isTerminated()

    /** Stops intake; queued and running work completes, then the workers exit ([PoolLifecycle.shutdown]). */
    fun shutdown() = lifecycle.shutdown()

    /** Stops and hands back what has not started ([PoolLifecycle.stop]). */
    fun stop(): List<Runnable> = lifecycle.stop()

    /** Waits up to [nanos] for termination ([PoolLifecycle.awaitTermination]). */
    fun awaitTermination(nanos: Long): Boolean = lifecycle.awaitTermination(nanos)

    /** Waits for termination and for every thread of the pool to end ([PoolLifecycle.joinAll]). */
    fun joinAll() = lifecycle.joinAll()

    /**
     * `close()` of the dispatcher and of its executor: [shutdown], then [joinAll] unless called
     * from a worker of this pool, which cannot wait for itself (the pool terminates once the
     * calling task and the queued work end).
     */
    fun close() {
        shutdown()
        if (currentWorker() == null) joinAll()
    }

    override fun tryQuiesce() = lifecycle.tryQuiesce()

    override fun workerExited(w: Worker, retiredIdle: Boolean) = threads.workerExited(w, retiredIdle)

    override fun onStolen(task: Runnable, thief: Worker) {
        if (task is JoinableTask) task.recordThief(thief)
    }

    override fun takeOffersOf(target: Worker, tryOnly: Boolean) = timers.takeOffersOf(target, tryOnly)

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
        return reject()
    }

    /**
     * [execute] for a task forked by [StealingDispatcher.fork]. The steps of [pushLocal],
     * except that a fork that finds an older task still queued below it skips the read of ctl
     * ([signalAfterFork]). Written out in a method of its
     * own on purpose: the JIT keeps one profile per method, and a fork/join loop compiled with
     * the profile of coroutine dispatches (outside submissions, frequent wake-ups) inlines their
     * cold paths and runs measurably slower (docs/investigations/2026-11-24-fork-join.md).
     * [signalAfterFork] is inline for the same reason.
     */
    fun fork(task: JoinableTask): Boolean {
        val w = currentWorker() ?: return forkFromOutside(task)
        if (isStopping()) return reject()
        w.deque.push(task)
        w.counters.countFork() // a plain increment by the owner: stats().forks
        signalAfterFork(w.deque)
        return true
    }

    /** [fork] from a thread outside this pool: the global queue, as [execute]; counted in [forksFromOutside]. */
    private fun forkFromOutside(task: JoinableTask): Boolean {
        if (!execute(task)) return false
        forksFromOutside.increment()
        return true
    }

    /** Tasks forked from threads outside the pool (those from workers are in their counters). */
    val forksFromOutside = LongAdder()

    /**
     * The `yield()` path. On a worker of this pool: [task] goes to the back of the worker's
     * yield queue ([Worker.yields]), which the worker serves after its deque, the global and
     * fair queues and its keyed work (and at least every other periodic look), so every task it
     * can see runs first; other workers steal from it as from a deque. An extra worker hands
     * its yield queue to the global queue once it is surplus, so it can still go idle
     * (`WorkFinder`). From any other thread: the back of the global queue.
     */
    fun executeYield(task: Runnable): Boolean {
        val w = currentWorker()
        if (w != null) {
            if (isStopping()) return reject()
            w.yields.push(task)
            signalAfterPublish()
            return true
        }
        if (global.offer(task)) {
            signalAfterGlobalOffer()
            return true
        }
        return reject()
    }

    private fun pushLocal(w: Worker, task: Runnable): Boolean {
        if (isStopping()) return reject()
        w.deque.push(task)
        signalAfterPublish()
        return true
    }

    /**
     * Queues [task] on the keyed queue of core worker [slot] (it runs there and is never
     * stolen); false (counted in [rejected]) when the pool no longer takes it. Accepted like
     * [execute]: from a worker of this pool until the pool stops, from outside until shutdown.
     * An outside offer is counted in [outsideOffers] while it checks the run state and
     * offers, so quiescence ([quiesceLocked]) cannot pass between the two and strand the task:
     * either the offer sees SHUTDOWN, or quiescence sees the offer (Dekker pair on two volatile
     * variables).
     */
    fun executeKeyed(slot: Int, task: Runnable): Boolean {
        // Core workers never exit before the pool stops, so a missing one means the pool shut
        // down before it could start it.
        val target = workers.getOrNull(slot) ?: return reject()
        if (currentWorker() != null) {
            if (isStopping()) return reject()
            beforeKeyedOffer?.run()
            // Refused once the target has closed its queue on its way out (the pool stopped
            // after the check above): that worker will never poll it again.
            return offerKeyed(target, task) || reject()
        }
        try {
            return lifecycle.countedOutsideOffer {
                if (isShutdown()) return reject()
                beforeKeyedOffer?.run()
                offerKeyed(target, task) || reject()
            }
        } finally {
            if (isShutdown()) tryQuiesce() // a quiescence check may have skipped this pool for us
        }
    }

    /** Counts a refused task in [rejected]; false, for the callers' `return`. */
    private fun reject(): Boolean {
        rejected.increment()
        return false
    }

    /**
     * Puts [task] on [target]'s keyed queue and unparks [target] if it is idle. Only [target]
     * can run it, so no other worker is woken: [target] wakes itself
     * ([IdleControl.parkWhileIdle]). The CAS in [KeyedQueue.offer] and the volatile read of the
     * park state below pair with the sleeper's IDLE write + fence + check of its queue
     * (docs/parking.md, "Affinity (keyed work)"). False, and nothing queued, if [target] has closed its
     * queue on its way out.
     */
    private fun offerKeyed(target: Worker, task: Runnable): Boolean {
        if (!target.keyedQueue!!.offer(task)) return false
        VarHandle.fullFence() // explicit, though the CAS in offer() already orders it
        if (target.idleNode.parkState() == ParkState.IDLE) LockSupport.unpark(target)
        return true
    }

    /**
     * Tests only: runs between a keyed offer's run-state check and the offer itself, to widen
     * the window in which the target worker may exit. Plain: set before any task is submitted.
     */
    @JvmField internal var beforeKeyedOffer: Runnable? = null

    /**
     * The re-scan: whether any queued task is there that any worker may take (global queue,
     * any deque, any fair queue, a due timer in any heap). Keyed queues are not included: only
     * their owner can run them, and it checks its own.
     */
    override fun hasVisibleWork(): Boolean {
        if (global.size() > 0) return true
        workers.forEach { if (it.hasQueuedTasks()) return true }
        return fair.hasWork() || timers.hasDueTimers()
    }

    /** Whether any core worker's keyed queue holds work. */
    fun hasKeyedWork(): Boolean {
        workers.forEach { if (it.keyedQueue?.hasWork() == true) return true }
        return false
    }

    /** A new fair queue in the rotation (closed at once if the pool is shut down). */
    fun newFairQueue(name: String?, weight: Int): FairQueue {
        require(name == null || name.isNotBlank()) { "name must not be blank, was \"$name\"" }
        require(weight in 1..MAX_FAIR_WEIGHT) { "weight must be in 1..$MAX_FAIR_WEIGHT, was $weight" }
        val q = FairQueue(this, name ?: "fair-${fairQueueIds.incrementAndGet()}", weight)
        fair.add(q) { isShutdown() }
        return q
    }

    private val fairQueueIds = AtomicInteger()

    /** Why a core worker could not pin its thread ([PoolConfig.pinThreads]), or null. */
    @Volatile var pinningFailure: String? = null
        private set

    override fun pinningFailed(why: String) {
        pinningFailure = why
    }

    /** Statistics and failure reporting. */
    private val statistics = PoolStats(this)

    /** A snapshot of the pool's counters. */
    fun stats(): PoolSnapshot = statistics.snapshot()

    override fun reportFailure(task: Runnable, e: Throwable) = statistics.reportFailure(task, e)

    private companion object {
        /** Largest fair-queue weight (a queue's turn buffer holds up to this many tasks). */
        const val MAX_FAIR_WEIGHT = 1000
    }
}
