package dev.stealing.internal.pool

import dev.stealing.FairQueueDispatcher
import dev.stealing.ForkedTask
import dev.stealing.StealingOptions
import dev.stealing.internal.idle.Ctl
import dev.stealing.internal.idle.IdleControl
import dev.stealing.internal.idle.IdleHost
import dev.stealing.internal.idle.IdleNode
import dev.stealing.internal.idle.ParkState
import dev.stealing.internal.join.ForkHalf
import dev.stealing.internal.jvm.CpuPinning
import dev.stealing.internal.queue.FairRotation
import dev.stealing.internal.queue.MpmcTaskQueue
import dev.stealing.internal.timer.PeriodicTasks
import dev.stealing.internal.worker.Worker
import java.lang.invoke.VarHandle
import java.util.concurrent.atomic.AtomicBoolean
import java.util.concurrent.atomic.AtomicInteger
import java.util.concurrent.atomic.LongAdder
import java.util.concurrent.locks.LockSupport
import java.util.concurrent.locks.ReentrantLock

/**
 * The engine behind [StealingDispatcher]: its parts, and where a task goes. Nothing here is
 * public; the public API is the library's public declarations ([StealingDispatcher] and its
 * options, stats, executor, fair-queue and affinity dispatchers, [ForkedTask], `forkJoin`,
 * `awaitInline`, `blocking`, the Micrometer binder), listed in `docs/design.md`.
 *
 * The pool's jobs, one file each:
 * - routing and publication (this file): [execute], [fork], [executeYield], [executeKeyed],
 *   and the two signal methods every publication goes through, [signalAfterGlobalOffer] and
 *   [signalAfterPublish];
 * - the life cycle and quiescence (`PoolLifecycle.kt`): shutdown, stop, termination, and
 *   [discard] for tasks that will never run;
 * - the worker table and thread start and exit (`WorkerThreads.kt`);
 * - statistics and failure reporting (`PoolStats.kt`);
 * - timers: where a timer goes, and the pool's side of them (`PoolTimers.kt`);
 * - who sleeps and who is woken: [IdleControl], which sees the pool only through [IdleHost].
 *
 * Routing ([execute]): a task submitted on one of this pool's workers goes onto that worker's
 * deque, then a full fence and [IdleControl.signalWork] follow; from any other thread it goes
 * to the global queue, whose claiming CAS already orders it before [IdleControl.signalWork]
 * (one volatile read when nobody needs waking).
 */
internal class WorkStealingPool(
    val parallelism: Int,
    val name: String,
    val options: StealingOptions,
) {
    init {
        require(name.isNotBlank()) { "name must not be blank, was \"$name\"" }
        require(parallelism in 1..Ctl.MAX_THREADS) {
            "parallelism must be in 1..${Ctl.MAX_THREADS}, was $parallelism"
        }
        require(options.maxThreads == 0 || options.maxThreads >= parallelism) {
            "maxThreads must be 0 (automatic) or >= parallelism ($parallelism), was ${options.maxThreads}"
        }
    }

    /** [StealingOptions.keepAlive] in nanoseconds; Long.MAX_VALUE (never retire) if longer than ~70 years. */
    val keepAliveNanos: Long = nanosOrNever(options.keepAlive)

    /** Most worker threads alive at once: `parallelism` plus extras for blocked workers. */
    val maxThreads: Int =
        if (options.maxThreads != 0) options.maxThreads else minOf(parallelism + DEFAULT_EXTRA_THREADS, Ctl.MAX_THREADS)

    val global = MpmcTaskQueue()
    val fair = FairRotation()
    val globalCheckInterval = options.globalCheckInterval

    /** Started workers by slot (`WorkerThreads.kt`). */
    val workers = WorkerTable(parallelism)

    /** Watches for workers stuck in tasks while work waits; null if disabled. Started with the first worker. */
    val monitor: StarvationMonitor? = nanosOrNever(options.starvationInterval).let { interval ->
        if (interval == 0L || interval == Long.MAX_VALUE) null else StarvationMonitor(this, interval)
    }

    /** Idle and block state of every worker; the few things it needs from the pool, and no more. */
    val idle = IdleControl(parallelism, maxThreads, name, object : IdleHost {
        override fun idleNode(index: Int): IdleNode = workers[index].idleNode
        override fun hasVisibleWork(): Boolean = this@WorkStealingPool.hasVisibleWork()
        override fun startWorker(): Boolean = this@WorkStealingPool.startWorker()
        override fun workerStartFailed(cause: Throwable, noneLive: Boolean) {
            reportFailure(Runnable { }, IllegalStateException("$name: cannot start a worker", cause))
            // With no live worker, nobody would ever run what is queued: reject it instead.
            if (noneLive) rejectQueuedWithoutWorkers(cause)
        }
        override fun workerActivated() {
            monitor?.onPoolActive()
        }
    })

    // Life-cycle state (PoolLifecycle.kt); the lock also guards the worker counts below.
    @Volatile @JvmField internal var runState = RunState.RUNNING
    @JvmField internal val lock = ReentrantLock()
    @JvmField internal val terminatedCondition = lock.newCondition()
    @JvmField internal var liveWorkers = 0 // guarded by lock
    @JvmField internal var injected = 0L // guarded by lock: extra threads started
    @JvmField internal var retired = 0L // guarded by lock: extra threads retired

    /**
     * Set (volatile) by the [stop] call that moved the pool to STOP once it has taken every
     * queued task it hands back; a worker exiting a stopping pool waits for it before it
     * rejects what is left on its own queues ([workerExited]).
     */
    @Volatile @JvmField internal var stopHandBackTaken = false

    /** Tests only: runs in [stop] right after the run state became STOP, before anything is taken. */
    @JvmField internal var afterStopState: Runnable? = null

    /**
     * Keyed offers and timers from outside the pool in progress; quiescence waits for them (see
     * [executeKeyed] and [addTimer]).
     */
    @JvmField internal val outsideOffers = AtomicInteger()

    // Timers (PoolTimers.kt).
    /** Round-robin cursor choosing the core worker that holds a timer created off the core workers. */
    @JvmField internal val timerPlacement = AtomicInteger()
    @JvmField internal val timersFromOutside = LongAdder()
    @JvmField internal val timersCancelled = LongAdder()

    /** Periodic tasks not yet ended, wherever they are; `shutdown()` cancels them. */
    val periodicTasks = PeriodicTasks()

    /** Set while [rejectQueuedWithoutWorkers] drains. */
    @JvmField internal val rejectingStranded = AtomicBoolean()

    /** Tasks refused (submission after shutdown) or discarded unrun. */
    val rejected = LongAdder()

    fun isShutdown(): Boolean = runState >= RunState.SHUTDOWN
    /** Workers should exit: STOP (shutdownNow), TIDYING or TERMINATED. */
    fun isStopping(): Boolean = runState >= RunState.STOP
    fun isTerminated(): Boolean = runState == RunState.TERMINATED

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
        return reject()
    }

    /**
     * [execute] for a task forked by [StealingDispatcher.fork]. The same steps as [pushLocal],
     * written out in a method of their own on purpose: the JIT keeps one profile per method,
     * and a fork/join loop compiled with the profile of coroutine dispatches (outside
     * submissions, frequent wake-ups) inlines their cold paths and runs measurably slower
     * (docs/investigations/2026-11-24-fork-join.md). [signalAfterPublish] is inline for the
     * same reason.
     */
    fun fork(task: ForkedTask<*>): Boolean {
        val w = currentWorker() ?: return execute(task)
        if (isStopping()) return reject()
        w.deque.push(task)
        signalAfterPublish()
        return true
    }

    /**
     * Publishes the second half of a `forkJoin` on [w]'s deque (ForkJoin.kt); false, and nothing
     * queued, when the pool is stopping (the caller then runs both halves itself). Its own
     * method, as [fork], for its own JIT profile.
     */
    fun forkHalf(w: Worker, half: ForkHalf<*>): Boolean {
        if (isStopping()) return false
        w.deque.push(half)
        signalAfterPublish()
        return true
    }

    /**
     * The `yield()` path. On a worker of this pool: [task] goes to the back of the worker's
     * yield queue ([Worker.yields]), which the worker serves after its deque, the global and
     * fair queues and its keyed work (and at least every other periodic look), so every task it
     * can see runs first; other workers steal from it as from a deque. An extra worker hands
     * its yield queue to the global queue once it is surplus, so it can still go idle
     * ([Worker.findTask]). From any other thread: the back of the global queue.
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
        outsideOffers.incrementAndGet()
        try {
            if (isShutdown()) return reject()
            beforeKeyedOffer?.run()
            return offerKeyed(target, task) || reject()
        } finally {
            outsideOffers.decrementAndGet()
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

    /** Tests only: runs when [startWorker] begins, before it takes the lock. Plain: set before any task is submitted. */
    @JvmField internal var beforeWorkerStart: Runnable? = null

    /** Starts a worker's thread ([startWorker]); tests replace it to make a start fail. */
    @JvmField internal var threadStarter: java.util.function.Consumer<Thread> = java.util.function.Consumer { it.start() }

    /**
     * Signals for a task just offered to the global queue or a fair queue. No explicit fence:
     * the offer claimed its slot with a CAS on the queue's enqueue index, a synchronization
     * action, and a sleeper's re-scan reads that index with a volatile read after its CAS on
     * ctl; the JMM totally orders these, so either the sleeper sees the claimed slot (and keeps
     * searching until it is written) or this volatile read of ctl sees the sleeper
     * (docs/parking.md).
     */
    fun signalAfterGlobalOffer() {
        idle.signalWork()
    }

    /**
     * Signals for a task just pushed onto a deque, or re-published after being hidden: every
     * deque publication ends here.
     */
    @Suppress("NOTHING_TO_INLINE")
    inline fun signalAfterPublish() {
        // Dekker fence: the task written above must be visible before ctl is read in
        // signalWork(). Pairs with the fence after the idle push in goIdle().
        VarHandle.fullFence()
        idle.signalWork()
    }

    /**
     * The re-scan: whether any queued task is there that any worker may take (global queue,
     * any deque, any fair queue, a due timer in any heap). Keyed queues are not included: only
     * their owner can run them, and it checks its own.
     */
    fun hasVisibleWork(): Boolean {
        if (global.size() > 0) return true
        workers.forEach { if (it.hasQueuedTasks()) return true }
        return fair.hasWork() || hasDueTimers()
    }

    /** Whether any core worker's keyed queue holds work. */
    fun hasKeyedWork(): Boolean {
        workers.forEach { if (it.keyedQueue?.hasWork() == true) return true }
        return false
    }

    /** A new fair queue in the rotation (closed at once if the pool is shut down). */
    fun newFairQueue(name: String?, weight: Int): FairQueueDispatcher {
        require(name == null || name.isNotBlank()) { "name must not be blank, was \"$name\"" }
        require(weight in 1..MAX_FAIR_WEIGHT) { "weight must be in 1..$MAX_FAIR_WEIGHT, was $weight" }
        val q = FairQueueDispatcher(this, name ?: "fair-${fairQueueIds.incrementAndGet()}", weight)
        fair.add(q) { isShutdown() }
        return q
    }

    private val fairQueueIds = AtomicInteger()

    /** With [StealingOptions.pinThreads]: the CPUs the creating thread may use, read once. */
    val pinnableCpus: java.util.BitSet? =
        if (!options.pinThreads) null else try { CpuPinning.allowedCpus() } catch (e: Throwable) { java.util.BitSet() }

    /** Why a core worker could not pin its thread ([StealingOptions.pinThreads]), or null. */
    @Volatile @JvmField internal var pinningFailure: String? = null

    // Statistics and failure reporting (PoolStats.kt).
    @JvmField internal val exitedTotals = WorkerTotals() // guarded by lock
    @JvmField internal val externalFailed = LongAdder()

    private companion object {
        /** Largest fair-queue weight (a queue's turn buffer holds up to this many tasks). */
        const val MAX_FAIR_WEIGHT = 1000

        /** Default extra threads beyond `parallelism` (as ForkJoinPool's default maximum). */
        const val DEFAULT_EXTRA_THREADS = 256
    }
}
