package dev.stealing

import java.util.concurrent.RejectedExecutionException
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger
import java.util.concurrent.atomic.AtomicReferenceArray
import java.util.concurrent.locks.LockSupport
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
 * Threads start lazily, one per [IdleControl.signalWork] that finds nobody to wake, up to
 * `parallelism`; beyond that, up to [maxThreads], only while workers are blocked (marked by
 * [enterBlocking] or presumed by the [StarvationMonitor]): the pool keeps at most `parallelism`
 * workers *active*, and extra threads retire after [StealingOptions.keepAlive] idle.
 */
internal class WorkStealingPool(
    val parallelism: Int,
    val name: String,
    val options: StealingOptions,
) {
    init {
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

    val global = GlobalQueue()
    val fair = FairRotation()
    val idle = IdleControl(this)
    val globalCheckInterval = options.globalCheckInterval

    /**
     * Worker slots; power-of-two sized for the odd-stride steal scan, doubled (copied under
     * [lock]) when an extra thread needs a slot beyond it. Slots are written under [lock]
     * (release) and read with acquire by scans, so a re-scan sees every worker started before
     * it; a worker keeps its index for life, and a retired worker's slot is reused once its node
     * is off the idle stack.
     */
    @Volatile var workerTable = AtomicReferenceArray<Worker?>(tableSizeFor(parallelism))
        private set

    /** Watches for workers stuck in tasks while work waits; null if disabled. Started with the first worker. */
    val monitor: StarvationMonitor? = nanosOrNever(options.starvationInterval).let { interval ->
        if (interval == 0L || interval == Long.MAX_VALUE) null else StarvationMonitor(this, interval)
    }

    @Volatile private var runState = RUNNING
    private val lock = ReentrantLock()
    private val terminatedCondition = lock.newCondition()
    private var liveWorkers = 0 // guarded by lock
    private var injected = 0L // guarded by lock: extra threads started
    private var retired = 0L // guarded by lock: extra threads retired
    private val presumedBlocked = LongAdder()

    /** Keyed offers from outside the pool in progress; quiescence waits for them (see [executeKeyed]). */
    private val outsideKeyedOffers = AtomicInteger()

    val rejected = LongAdder()
    private val externalFailed = LongAdder()

    fun workerAt(index: Int): Worker = workerTable.getAcquire(index)!!

    /** Started workers (including retired ones whose slot is not reused yet), for iteration (racy snapshot). */
    inline fun forEachWorker(action: (Worker) -> Unit) {
        val table = workerTable
        for (i in 0 until table.length()) table.getAcquire(i)?.let(action)
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

    /**
     * [execute] for a task forked by [StealingDispatcher.fork]. The same steps as [pushLocal],
     * written out in a method of their own on purpose: the JIT keeps one profile per method,
     * and a fork/join loop compiled with the profile of coroutine dispatches (outside
     * submissions, frequent wake-ups) inlines their cold paths and ran about 12% slower
     * (fib(27) after coroutine workloads in the same JVM). [signalAfterPublish] is inline for
     * the same reason.
     */
    fun fork(task: ForkedTask<*>): Boolean {
        val w = currentWorker() ?: return execute(task)
        if (isStopping()) return reject()
        w.deque.push(task)
        signalAfterPublish()
        return true
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

    /**
     * Queues [task] on the personal queue of core worker [slot] (keyed work: it runs there and is
     * never stolen); false (counted in [rejected]) when the pool no longer takes it. Accepted
     * like [execute]: from a worker of this pool until the pool stops, from outside until
     * shutdown. An outside offer is counted in [outsideKeyedOffers] while it checks the run
     * state and offers, so quiescence ([quiesceLocked]) cannot pass between the two and strand
     * the task: either the offer sees SHUTDOWN, or quiescence sees the offer (Dekker pair on
     * two volatile variables).
     */
    fun executeKeyed(slot: Int, task: Runnable): Boolean {
        // Core workers never exit before the pool stops, so a missing one means the pool shut
        // down before it could start it.
        val target = workerTable.getAcquire(slot) ?: return reject()
        if (currentWorker() != null) {
            if (isStopping()) return reject()
            beforeKeyedOffer?.run()
            // Refused once the target has closed its queue on its way out (the pool stopped
            // after the check above): that worker will never poll it again.
            return offerPersonal(target, task) || reject()
        }
        outsideKeyedOffers.incrementAndGet()
        try {
            if (isShutdown()) return reject()
            beforeKeyedOffer?.run()
            return offerPersonal(target, task) || reject()
        } finally {
            outsideKeyedOffers.decrementAndGet()
            if (isShutdown()) tryQuiesce() // a quiescence check may have skipped this pool for us
        }
    }

    private fun reject(): Boolean {
        rejected.increment()
        return false
    }

    /**
     * Puts [task] on [target]'s personal queue and wakes [target] if it is idle. Only [target]
     * can run it, so no other worker is woken: [target] wakes itself (Worker.sleep). The
     * CAS in [AffinityQueue.offer] and the volatile read of the park state below pair with
     * the sleeper's IDLE write + fence + check of its queue (docs/parking.md, "Affinity").
     * False, and nothing queued, if [target] has closed its queue on its way out.
     */
    private fun offerPersonal(target: Worker, task: Runnable): Boolean {
        if (!target.personal!!.offer(task)) return false
        VarHandle.fullFence() // explicit, though the CAS in offer() already orders it
        if (target.parkState() == Worker.IDLE) LockSupport.unpark(target)
        return true
    }

    /**
     * Tests only: runs between a keyed offer's run-state check and the offer itself, to widen
     * the window in which the target worker may exit. Plain: set before any task is submitted.
     */
    @JvmField internal var beforeKeyedOffer: Runnable? = null

    /**
     * Starts every core worker that is not running yet (keyed work needs its worker to exist),
     * and waits until each has its slot.
     */
    fun startCoreWorkers() {
        while (idle.startOneCoreWorker()) { /* one more */ }
        val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10)
        for (i in 0 until parallelism) {
            while (workerTable.getAcquire(i) == null) { // another thread may be starting it right now
                if (runState >= TIDYING) return // keyed offers are rejected then
                check(System.nanoTime() < deadline) { "$name: core worker $i could not be started" }
                Thread.yield()
            }
        }
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
    @Suppress("NOTHING_TO_INLINE")
    inline fun signalAfterPublish() {
        // Dekker fence: the task written above must be visible before ctl is read in
        // signalWork(). Pairs with the fence after the idle push in IdleControl.pushIdle().
        VarHandle.fullFence()
        idle.signalWork()
    }

    /** A new fair queue in the rotation (closed at once if the pool is shut down). */
    fun newFairQueue(name: String?, weight: Int): FairQueueDispatcher {
        require(weight in 1..MAX_FAIR_WEIGHT) { "weight must be in 1..$MAX_FAIR_WEIGHT, was $weight" }
        val q = FairQueueDispatcher(this, name ?: "fair-${fairQueueIds.incrementAndGet()}", weight)
        fair.add(q) { isShutdown() }
        return q
    }

    private val fairQueueIds = AtomicInteger()

    @Volatile private var pinningFailure: String? = null

    /** With [StealingOptions.pinThreads]: the CPUs the creating thread may use, read once. */
    val pinnableCpus: java.util.BitSet? =
        if (!options.pinThreads) null else try { CpuPinning.allowedCpus() } catch (e: Throwable) { java.util.BitSet() }

    /** A core worker could not pin its thread ([StealingOptions.pinThreads]). */
    fun pinningFailed(e: Throwable) {
        pinningFailure = e.message ?: e.toString()
    }

    /** `off`, or which core workers are pinned to which CPUs, or why pinning did not take. */
    private fun pinningSummary(): String {
        if (!options.pinThreads) return "off"
        val cpus = ArrayList<Int>()
        forEachWorker { if (!it.isExtra && it.pinnedCpu >= 0) cpus += it.pinnedCpu }
        val failure = pinningFailure
        return when {
            failure != null && cpus.isEmpty() -> "off (not allowed: $failure)"
            failure != null -> "partial: CPUs $cpus (${cpus.size} of $parallelism; $failure)"
            else -> "on: CPUs $cpus"
        }
    }

    /** Whether any core worker's personal queue holds keyed work. */
    private fun hasPersonalWork(): Boolean {
        forEachWorker { if (it.personal?.hasWork() == true) return true }
        return false
    }

    /**
     * Whether a re-scan finds any queued task that any worker may take (global queue or any
     * deque). Personal queues are not included: only their owner can run them, and it checks
     * its own.
     */
    fun hasVisibleWork(): Boolean {
        if (global.size() > 0) return true
        forEachWorker { if (!it.deque.isEmpty()) return true }
        return fair.hasWork()
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
        if (lock.withLock { quiesceLocked() }) wakeAllForExit()
    }

    /** Under [lock]: moves a shut-down pool with nothing queued and every live worker idle to TIDYING. */
    private fun quiesceLocked(): Boolean {
        if (runState != SHUTDOWN || !global.isDrained() || hasVisibleWork()) return false
        if (!idle.allIdle(liveWorkers) { !hasVisibleWork() && outsideKeyedOffers.get() == 0 && !hasPersonalWork() }) {
            return false
        }
        runState = TIDYING
        return true
    }

    private fun wakeAllForExit() {
        idle.wakeAll()
        monitor?.wakeToExit()
    }

    /**
     * Starts a worker in the lowest free slot (so core slots below `parallelism` fill first);
     * false if the pool terminated meanwhile or no slot is free. Called by [IdleControl], which
     * has already counted the worker.
     */
    fun startWorker(): Boolean {
        val w = lock.withLock {
            if (runState >= TIDYING) return false
            val index = freeSlotLocked()
            if (index < 0) return false
            val w = Worker(this, index)
            workerTable.setRelease(index, w) // pairs with getAcquire in scans
            liveWorkers++
            if (w.isExtra) injected++
            w
        }
        try {
            threadStarter.accept(w)
        } catch (e: Throwable) {
            lock.withLock {
                workerTable.setRelease(w.index, null)
                liveWorkers--
                if (w.isExtra) injected--
                tryTerminateLocked()
            }
            throw e
        }
        if (monitor != null && w.index == 0) {
            try {
                monitor.startOnce()
            } catch (e: Throwable) { // the worker runs; only detection is lost
                reportFailure(Runnable { }, IllegalStateException("$name: cannot start the starvation monitor", e))
            }
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

    /** Starts a worker's thread; tests replace it to make a start fail. */
    @JvmField internal var threadStarter: java.util.function.Consumer<Thread> = java.util.function.Consumer { it.start() }

    /**
     * A worker could not be started and none is alive: the tasks waiting in the global queue
     * and the fair queues would never run, so each is rejected ([rejectTask]: a forked task is
     * cancelled, a coroutine cancelled, anything else reported, with [cause]) instead of being
     * stranded. A later submission tries to start a worker again.
     */
    fun rejectQueuedWithoutWorkers(cause: Throwable) {
        // One drainer at a time: taking a fair queue's turn signals, and that signal's failed
        // start would call this again on the same thread. A caller that finds a drain under
        // way leaves its task to it: the drainer re-checks the queues after it lets go.
        while (rejectingStranded.compareAndSet(false, true)) {
            try {
                while (true) rejectTask(global.poll() ?: fair.poll() ?: break, startFailure = cause)
            } finally {
                rejectingStranded.set(false)
            }
            if (idle.liveCount != 0 || (global.size() == 0 && !fair.hasWork())) return
        }
    }

    /** Set while [rejectQueuedWithoutWorkers] drains. */
    private val rejectingStranded = java.util.concurrent.atomic.AtomicBoolean()

    /** Under [lock]: the lowest slot that is empty or holds a retired worker already unlinked; grows the table. */
    private fun freeSlotLocked(): Int {
        var table = workerTable
        for (i in 0 until table.length()) {
            val w = table.get(i)
            if (w == null || w.parkState() == Worker.RETIRED) return i
        }
        val index = table.length()
        if (index >= Ctl.MAX_THREADS) return -1
        val bigger = AtomicReferenceArray<Worker?>(table.length() * 2)
        for (i in 0 until table.length()) bigger.set(i, table.get(i))
        workerTable = bigger // volatile: scans that read the old table miss only workers not yet started
        return index
    }

    fun workerExited(w: Worker, retiredIdle: Boolean) {
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

    /** The calling worker [w] enters a blocking region: another worker may run in its place. */
    fun enterBlocking(w: Worker) {
        if (w.blockingDepth++ > 0) return
        // The monitor may have presumed w blocked (it is already uncounted then): take that over.
        if (w.casBlockState(Worker.NOT_BLOCKED, Worker.MARKED)) idle.beginBlocking() else w.blockState = Worker.MARKED
    }

    /** The calling worker [w] leaves its blocking region. */
    fun exitBlocking(w: Worker) {
        if (--w.blockingDepth > 0) return
        w.blockState = Worker.NOT_BLOCKED
        idle.endBlocking()
    }

    /** Starvation monitor: [w] seems stuck in a task while work waits; uncount it and compensate. */
    fun presumeBlocked(w: Worker): Boolean {
        if (!w.casBlockState(Worker.NOT_BLOCKED, Worker.PRESUMED)) return false
        presumedBlocked.increment()
        idle.beginBlocking()
        return true
    }

    /**
     * [w] finished a task while presumed blocked (the task it was presumed blocked in, or the
     * presumption landed just after that task ended: either way it is running, so count it).
     */
    fun endPresumedBlocking(w: Worker) {
        w.blockState = Worker.NOT_BLOCKED // only w moves its state out of PRESUMED
        idle.endBlocking()
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
        // Fair queues first: quiescence needs the global queue closed and drained, so once it
        // can happen every fair queue is closed too and re-scans ask each of them (FairRotation,
        // "Quiescence"). In the other order a worker could quiesce the pool between the two
        // closes while a fair queue still took work that would never run.
        fair.closeAll()
        global.close()
        if (!global.isDrained() || fair.hasWork()) signalAfterPublish() // tasks queued: make sure a worker runs them
        idle.wakeAll() // idle workers re-check and the last one to go idle again quiesces
        lock.withLock { tryTerminateLocked() }
        if (isTerminated()) monitor?.wakeToExit()
    }

    /** Stops intake and hands back every task not yet started. */
    fun stop(): List<Runnable> {
        advanceRunState(STOP)
        fair.closeAll() // in the order of shutdown()
        global.close()
        val unstarted = ArrayList<Runnable>()
        fair.drainAll(unstarted)
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
        // handed back so such a join ends (as ForkJoinPool.shutdownNow does). A coroutine's
        // continuation is no task of the caller's: its coroutine is cancelled (rejectTask), as
        // kotlinx's executor dispatchers do, instead of being handed back to hang unresumed.
        val handedBack = ArrayList<Runnable>(unstarted.size)
        for (task in unstarted) {
            when (task) {
                is kotlin.coroutines.Continuation<*> -> rejectTask(task)
                is ForkedTask<*> -> { task.cancel(false); handedBack += task }
                else -> handedBack += task
            }
        }
        wakeAllForExit()
        lock.withLock { tryTerminateLocked() }
        return handedBack
    }

    private fun advanceRunState(target: Int) {
        lock.withLock {
            if (runState < target) runState = target
        }
    }

    /**
     * When [w] exits a stopping pool: tasks it pushed onto its own deque after [stop] took the
     * deque's contents, and keyed tasks in its personal queue, are rejected, not lost. The
     * personal queue is closed first, so a keyed offer racing this exit is either drained here
     * or refused to its producer ([executeKeyed]).
     */
    private fun rejectLeftovers(w: Worker) {
        while (true) rejectTask(w.deque.pop() ?: break)
        w.personal?.drainClosed(::rejectTask)
    }

    /**
     * A task that cannot run any more because the pool stopped. A [ForkedTask] is cancelled, a
     * coroutine continuation has its job cancelled and is resumed elsewhere (as kotlinx's own
     * executor dispatchers do), anything else reaches the failure handler with a
     * [RejectedExecutionException].
     */
    fun rejectTask(task: Runnable, startFailure: Throwable? = null) {
        rejected.increment()
        val why = if (startFailure == null) "$name stopped" else "$name could not start a worker"
        when (task) {
            is ForkedTask<*> -> task.cancel(false)
            is kotlin.coroutines.Continuation<*> -> rejectContinuation(task.context, task, "The task was rejected: $why")
            else -> reportFailure(task, RejectedExecutionException("$why before running $task", startFailure))
        }
    }

    /**
     * Waits up to [nanos] for TERMINATED; true if reached. Zero or negative: no wait. Throws
     * [InterruptedException] (undeclared) if interrupted while waiting.
     */
    fun awaitTermination(nanos: Long): Boolean {
        if (runState == TERMINATED) return true
        if (nanos <= 0L) return false
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

    /**
     * Waits for termination, then for every worker thread to finish. Not on a worker. An
     * interrupt does not end the wait; it is re-asserted on return (as JDK 19+
     * `ExecutorService.close()` does).
     */
    fun joinAll() {
        var interrupted = false
        while (true) {
            try {
                while (!awaitTermination(TimeUnit.SECONDS.toNanos(1))) { /* keep waiting */ }
                forEachWorker { it.join() }
                break
            } catch (e: InterruptedException) {
                interrupted = true
            }
        }
        if (interrupted) Thread.currentThread().interrupt()
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

    /**
     * Counters of workers that have exited (retired extras, or all of them at termination),
     * guarded by [lock]: [stats] adds the live workers' counters to these, under the same lock,
     * so every counter only grows, whichever threads come and go.
     */
    private val exitedTotals = WorkerTotals()

    fun stats(): StealingStats {
        val t = WorkerTotals()
        var blocked = 0
        val depths = ArrayList<Int>()
        val affinityDepths = ArrayList<Int>()
        val live: Int; val injectedNow: Long; val retiredNow: Long
        lock.withLock {
            t.addAll(exitedTotals)
            forEachWorker { w ->
                if (w.countersFolded) return@forEachWorker // exited: counted in exitedTotals
                if (w.blockState == Worker.MARKED || w.blockState == Worker.PRESUMED) blocked++
                w.personal?.let { affinityDepths += it.size() }
                depths += w.deque.size()
                t.add(w)
            }
            live = liveWorkers; injectedNow = injected; retiredNow = retired
        }
        return StealingStats(
            name = name, parallelism = parallelism, threads = live, idleThreads = idle.idleCount(),
            blockedThreads = blocked, maxThreads = maxThreads, injectedThreads = injectedNow,
            retiredThreads = retiredNow, presumedBlocked = presumedBlocked.sum(),
            executed = t.executed, localPops = t.localPops, globalPops = t.globalPops,
            stealAttempts = t.stealAttempts, steals = t.steals, inlined = t.inlined, helped = t.helped,
            blockedJoins = t.blockedJoins, parks = t.parks, unparks = t.wakeups,
            failed = t.failed + externalFailed.sum(), cancelled = t.cancelledSkipped,
            rejected = rejected.sum(), globalQueueDepth = global.size(), workerQueueDepths = depths,
            affinityPops = t.affinityPops, affinityQueueDepths = affinityDepths,
            fairQueues = fair.queues().map { it.stats() },
            pinning = pinningSummary(),
            state = when (runState) {
                RUNNING -> "running"; SHUTDOWN -> "shutting down"; STOP -> "stopping"; TIDYING -> "terminating"; else -> "terminated"
            },
        )
    }

    private companion object {
        /** Largest fair-queue weight (a queue's turn buffer holds up to this many tasks). */
        const val MAX_FAIR_WEIGHT = 1000

        /** Default extra threads beyond `parallelism` (as ForkJoinPool's default maximum). */
        const val DEFAULT_EXTRA_THREADS = 256

        fun tableSizeFor(n: Int): Int = Integer.highestOneBit(n * 2 - 1).coerceAtLeast(1)

        const val RUNNING = 0
        const val SHUTDOWN = 1
        const val STOP = 2
        const val TIDYING = 3
        const val TERMINATED = 4
    }
}

/** Sums of the per-worker counters, for [WorkStealingPool.stats]. */
internal class WorkerTotals {
    var executed = 0L; var localPops = 0L; var globalPops = 0L; var stealAttempts = 0L
    var steals = 0L; var parks = 0L; var wakeups = 0L; var inlined = 0L; var helped = 0L
    var blockedJoins = 0L; var failed = 0L; var cancelledSkipped = 0L; var affinityPops = 0L

    /** Adds [w]'s counters (racy reads of the owner's plain fields). */
    fun add(w: Worker) {
        executed += w.executed; localPops += w.localPops; globalPops += w.globalPops
        stealAttempts += w.stealAttempts; steals += w.steals; parks += w.parks; wakeups += w.wakeups
        inlined += w.inlined; helped += w.helped; blockedJoins += w.blockedJoins; failed += w.failed
        cancelledSkipped += w.cancelledSkipped; affinityPops += w.affinityPops
    }

    fun addAll(o: WorkerTotals) {
        executed += o.executed; localPops += o.localPops; globalPops += o.globalPops
        stealAttempts += o.stealAttempts; steals += o.steals; parks += o.parks; wakeups += o.wakeups
        inlined += o.inlined; helped += o.helped; blockedJoins += o.blockedJoins; failed += o.failed
        cancelledSkipped += o.cancelledSkipped; affinityPops += o.affinityPops
    }
}
