package dev.stealing.internal.worker

import dev.stealing.ForkedTask
import dev.stealing.internal.idle.IdleControl
import dev.stealing.internal.idle.IdleNode
import dev.stealing.internal.idle.endPresumptionIfAny
import dev.stealing.internal.idle.enterBlocking
import dev.stealing.internal.idle.exitBlocking
import dev.stealing.internal.jvm.CpuPinning
import dev.stealing.internal.jvm.LateTimerEvent
import dev.stealing.internal.jvm.ParkEvent
import dev.stealing.internal.jvm.StealEvent
import dev.stealing.internal.pool.WorkStealingPool
import dev.stealing.internal.pool.reportFailure
import dev.stealing.internal.pool.takeOffersOf
import dev.stealing.internal.pool.tryQuiesce
import dev.stealing.internal.pool.workerExited
import dev.stealing.internal.queue.KeyedQueue
import dev.stealing.internal.queue.StealResult
import dev.stealing.internal.queue.TaskMatcher
import dev.stealing.internal.queue.WorkDeque
import dev.stealing.internal.timer.Timer
import dev.stealing.internal.timer.TimerHeap

/**
 * A worker thread of a [WorkStealingPool] and its scheduling loop.
 *
 * Where a worker looks for its next task, in order:
 * 1. every [WorkStealingPool.globalCheckInterval]-th task: its due timers, the global queue,
 *    then a fair queue's turn, then the oldest task of its own deque, then the oldest yielded
 *    coroutine (every other time that one first), so neither timers, nor outside work, nor old
 *    local work starves under a LIFO stream of new local work, nor a yielded coroutine under
 *    any stream ([pollPeriodic]);
 * 2. its own deque, newest first (LIFO: the child just forked runs next, on a warm cache);
 * 3. its due timers ([timers]; taken out of the heap and pushed onto the deque, so they can
 *    be stolen like any task), the global queue, then the fair queues ([FairRotation]: the
 *    next queue with work in the round-robin, which yields up to its weight in tasks), its
 *    keyed work (below), then the oldest coroutine in its yield queue ([yields]: `yield()` on
 *    this worker);
 * Keyed work ([StealingDispatcher.affinity]) waits in a core worker's keyed queue, which only
 * that worker serves: before everything above for [KEYED_SWAP] tasks, after its own deque and
 * the global and fair queues (but before stealing) for the next [KEYED_SWAP], and so on, so
 * neither keyed nor shared work starves the other.
 *
 * 4. it takes due timers from other workers' heaps (a worker stuck in a long task or blocked
 *    must not hold them back; `PoolTimers.kt`), then (a core worker) probes one random other
 *    worker and takes half of its deque at once ([stealHalf]);
 * 5. it becomes a *searcher* and steals from the other workers, visiting them from a random
 *    start with an odd stride over a power-of-two table (every worker once per round): one
 *    round that leaves a victim's lone task to its owner, then more that leave it only while
 *    the victim keeps starting tasks, for [StealingOptions.spinRounds] x 64 spin-waits, the
 *    rounds further apart as the search goes on (64, 128, 256, then 512 spin-waits);
 * 6. it parks through [IdleControl] (push idle, fence, re-scan, park), which owns its
 *    [idleNode] (park state, block state, searching flag); a core worker with pending timers
 *    parks no longer than until its earliest deadline.
 *
 * Workers with an index below `parallelism` are *core* workers and park without a time limit
 * (or until their earliest timer).
 * The others are *extra* threads started to compensate for blocked workers: while more than
 * `parallelism` workers are active they go idle between tasks ([IdleControl.tryPushSurplus]),
 * and once idle for [StealingOptions.keepAlive] they retire.
 *
 * Each field says who touches it. Most are owner only; the statistics counters and [inTask]
 * are written by this thread and read racily by others; the monitor's bookkeeping belongs to
 * the starvation monitor.
 */
internal class Worker(
    @JvmField val pool: WorkStealingPool,
    @JvmField val index: Int,
) : Thread("${pool.name}-worker-$index") {
    @JvmField val deque = WorkDeque(pool.options.initialDequeCapacity, owner = this)

    /**
     * Coroutines that called `yield()` on this worker, oldest first: the owner pushes
     * ([WorkStealingPool.executeYield], and the half it takes from a longer yield queue in
     * [stealHalf]) and takes the oldest ([WorkDeque.pollOldest]); thieves steal the oldest, as
     * from [deque]. An extra worker hands it to the global queue when surplus
     * ([handOverYields]). A yield stays on its worker, with its caches, and does not go through
     * the global queue that every worker shares.
     */
    @JvmField val yields = WorkDeque(pool.options.initialDequeCapacity, owner = this)

    /** This worker's idle and block state; written only by [IdleControl]. */
    @JvmField val idleNode = IdleNode(index, this)

    /** An extra thread beyond `parallelism`: surplus-parks and retires after its keep-alive. */
    @JvmField val isExtra = index >= pool.parallelism

    /** Keyed work only this worker runs ([StealingDispatcher.affinity]); core workers only. */
    @JvmField val keyedQueue: KeyedQueue? = if (isExtra) null else KeyedQueue()

    /**
     * Timers this worker fires ([TimerHeap]); core workers only (an extra worker may retire,
     * so the timers it creates go to a core worker's heap: `PoolTimers.kt`).
     */
    @JvmField val timers: TimerHeap? = if (isExtra) null else TimerHeap()

    /** Owner only: whether the keyed queue is served before shared work (swapped every [KEYED_SWAP] tasks). */
    private var keyedFirst = false
    private var keyedTick = 0

    /**
     * Owner only, for [IdleControl.parkWhileIdle]: work only this worker takes has arrived
     * (keyed work, or one of its timers is due, offered ones taken in first). Allocated once.
     */
    private val hasOwnWork: () -> Boolean = {
        keyedQueue?.hasWork() == true || timers?.let { heap ->
            heap.takeOffers()
            heap.isDue(System.nanoTime())
        } == true
    }

    /**
     * Owner only, for [IdleControl.parkWhileIdle], called after the IDLE write and its fence:
     * nanoseconds until its earliest timer is due, or Long.MAX_VALUE. Publishes that deadline
     * for offerers first ([TimerHeap.publishParkDeadline]: an offer of an earlier timer then
     * unparks this worker).
     */
    private val nanosToOwnDeadline: () -> Long = {
        val e = timers?.publishParkDeadline()
        if (e == null) Long.MAX_VALUE else e.deadline - System.nanoTime()
    }

    /**
     * Owner writes, the starvation monitor reads racily: this worker is inside a top-level task
     * (not searching, parking, or woken but not yet scheduled). Plain, to keep the hot loop
     * free of fences; the monitor only needs to see it eventually.
     */
    @JvmField var inTask = false

    /** Starvation monitor only: [executed] at its last look, and looks since it changed. */
    @JvmField var monitorLastExecuted = -1L
    @JvmField var monitorStalledTicks = 0

    /**
     * Top-level tasks started (not counting nested ones, which [executed] counts): owner
     * writes, the monitor reads racily to see a worker still inside the same task.
     */
    @JvmField var topLevelTasks = 0L

    /** Starvation monitor only: [topLevelTasks] at its last look. */
    @JvmField var monitorLastTopLevel = -1L

    /** Owner only: nesting depth of tasks run inline or while helping a join. */
    @JvmField var inlineDepth = 0

    private var tick = 0
    private var yieldTick = 0 // owner only: pollYielded() calls since its last stealHalf()
    private var yieldedFirst = false // owner only: whether this pollPeriodic() takes a yielded coroutine first
    private var random = (index + 1) * 0x9E3779B9.toInt() or 1

    // Statistics: written by the owner with plain stores, read racily by stats() (PoolStats.kt).
    @JvmField var executed = 0L
    @JvmField var localPops = 0L
    @JvmField var globalPops = 0L
    @JvmField var stealAttempts = 0L
    @JvmField var steals = 0L
    @JvmField var parks = 0L
    @JvmField var wakeups = 0L
    @JvmField var inlined = 0L
    @JvmField var helped = 0L
    @JvmField var blockedJoins = 0L
    @JvmField var failed = 0L
    @JvmField var cancelledSkipped = 0L
    @JvmField var keyedPops = 0L
    @JvmField var forks = 0L // forkJoin halves published by this worker's callers
    @JvmField var forksInlined = 0L // ... taken back by a caller running on this worker
    @JvmField var forksStolen = 0L // ... claimed by this worker and run as a coroutine
    @JvmField var timersFired = 0L
    @JvmField var timersStolen = 0L
    @JvmField var timersCancelled = 0L

    init {
        isDaemon = pool.options.daemon
    }

    /**
     * Set under the pool's lock when this worker has exited and its counters were added to the
     * pool's totals; read under that lock by stats(), which then skips it.
     */
    @JvmField var countersFolded = false

    /** Owner only: set when this worker left the pool by retiring (already uncounted). */
    private var retired = false

    /** The CPU this core worker is pinned to ([StealingOptions.pinThreads]), or -1. */
    @Volatile @JvmField var pinnedCpu = -1

    override fun run() {
        if (pool.options.pinThreads && !isExtra) {
            try {
                pinnedCpu = CpuPinning.pinCurrentThread(index, pool.pinnableCpus!!)
            } catch (e: Throwable) { // the pool runs unpinned; stats() says why
                pool.pinningFailure = e.message ?: e.toString()
            }
        }
        try {
            while (true) {
                val task = findTask() ?: break
                pool.idle.endSearch(idleNode)
                topLevelTasks++
                inTask = true
                clearStrayInterrupt()
                runTask(task)
                inTask = false
            }
        } finally {
            if (!retired) pool.idle.exitRunning(idleNode)
            pool.workerExited(this, retired)
        }
    }

    /**
     * Before a top-level task: an interrupt left over from the previous task (or from a cancel
     * aimed at it) must not reach this one, as in `ThreadPoolExecutor`. Unless the pool is
     * stopping: then the interrupt is [stop]'s and stays (re-asserted if this
     * cleared it after stop() sent it; stop() writes the run state before it interrupts).
     * Not for nested runs (inlined or helped tasks), whose caller's interrupt status belongs to
     * the caller.
     */
    private fun clearStrayInterrupt() {
        if (interrupted() && pool.isStopping()) interrupt()
    }

    /** Runs [task], counting it; a failure goes to the pool's handler and the worker lives on. */
    fun runTask(task: Runnable) {
        executed++
        try {
            task.run()
        } catch (e: Throwable) {
            failed++
            pool.reportFailure(task, e)
        }
        pool.idle.endPresumptionIfAny(idleNode)
    }

    /** Owner only: enters a blocking region (`blocking { }`, a blocking join); see [IdleControl.enterBlocking]. */
    fun enterBlocking() = pool.idle.enterBlocking(idleNode)

    /** Owner only: leaves the blocking region entered by [enterBlocking]. */
    fun exitBlocking() = pool.idle.exitBlocking(idleNode)

    /**
     * Owner only. Runs [task] nested in the current one (wait-inlining or helping), keeping
     * the nesting depth bounded by the caller's check of [canNest].
     */
    fun runNested(task: Runnable) {
        inlineDepth++
        try {
            runTask(task)
        } finally {
            inlineDepth--
        }
    }

    /**
     * Owner only. Removes the queued task matching [target]: the newest by a plain pop
     * ([WorkDeque.popNewestIf], the common case: the child forked last is awaited first), any
     * other with [WorkDeque.tryRemove], after which the tasks it hid from thieves for a moment
     * are published again so that an idle worker that re-scanned meanwhile is woken
     * (docs/parking.md, "hiding").
     */
    fun removeLocal(target: Any, matcher: TaskMatcher): Runnable? {
        deque.popNewestIf(target, matcher)?.let { return it }
        val r = deque.tryRemove(target, matcher)
        if (r.mustRepublish) pool.signalAfterPublish()
        return r.task
    }

    /**
     * Owner only. [runNested] for a forked task the joiner popped itself: the same bookkeeping,
     * but a direct call of the final [ForkedTask.run], so the common join does not go through
     * the task call of [runTask], which sees every kind of task and is megamorphic. Nothing to
     * catch: [ForkedTask.run] turns any failure of its callable into the task's outcome.
     */
    fun runNested(task: ForkedTask<*>) {
        inlineDepth++
        executed++
        try {
            task.run()
        } finally {
            inlineDepth--
        }
        pool.idle.endPresumptionIfAny(idleNode)
    }

    /** Owner only: whether another task may be run nested without risking the stack. */
    fun canNest(): Boolean = inlineDepth < pool.options.maxInlineDepth

    /** Any thread: whether this worker's deque or yield queue holds a task. */
    fun hasQueuedTasks(): Boolean = !deque.isEmpty() || !yields.isEmpty()

    /** Any thread: tasks in this worker's deque and yield queue. */
    fun queuedTasks(): Int = deque.size() + yields.size()

    /**
     * Owner only: the periodic look (every [WorkStealingPool.globalCheckInterval]-th task). Due
     * timers, then the global queue, a fair queue's turn, the oldest task of the deque and the
     * oldest yielded coroutine; every other time the yielded coroutine goes first. So neither a
     * LIFO stream of new local work nor a stream of outside or fair-queue work holds a yielded
     * coroutine back for ever (the normal path serves the yield queue only when all of them
     * are empty), nor a yield loop the oldest local task.
     */
    private fun pollPeriodic(): Runnable? {
        pollDueTimers()?.let { return it }
        yieldedFirst = !yieldedFirst
        if (yieldedFirst) yields.pollOldest()?.let { localPops++; return it }
        pollGlobal()?.let { return it }
        pool.fair.poll()?.let { return it }
        val task = deque.pollOldest() ?: yields.pollOldest()
        if (task != null) localPops++
        return task
    }

    /**
     * Owner only: the oldest coroutine in the yield queue. Once per round of that queue (every
     * [yields]`.size()` polls), first [stealHalf] from another worker's yield queue into it,
     * else from another worker's deque onto this one's (coroutines not yet started). Without
     * that, a worker that stole a single coroutine would run it alone to its end, yield after
     * yield, while another worker round-robins hundreds, or holds one yielded coroutine while
     * it is stuck in a task: each worker would be fair only to its own coroutines.
     */
    private fun pollYielded(): Runnable? {
        if (yields.isEmpty()) return null // nothing yielded here: stealing is scanOthers()'s job
        if (++yieldTick >= yields.size()) {
            yieldTick = 0
            (stealHalf(yielded = true) ?: stealHalf(yielded = false))?.let { return it }
        }
        val task = yields.pollOldest()
        if (task != null) localPops++
        return task
    }

    /**
     * Owner only. One probe of a random other worker, queue to queue: with [yielded], from its
     * yield queue into this worker's (the balance of [pollYielded]); otherwise from its deque
     * onto this worker's deque (a worker that has run dry: a burst spreads in one go, not one
     * steal per task). If the other queue is longer than this one, steal half the difference
     * (at most [MAX_BALANCE_STEAL]); if it holds any task but its worker has not started a task
     * since this worker's last look (stuck in one task), steal one, so a victim's lone task is
     * taken only from a stuck victim, as in [scanOthers]. Returns the first task taken and
     * pushes the rest. The two kinds never mix: a yielded coroutine put on a deque could be
     * resumed nested in a join that helps from that deque, and a fork put in a yield queue
     * would be out of its joiner's reach. Stops at the first steal that finds nothing, and
     * takes nothing once the pool is stopping. Costs one read of the other queue's size and of
     * its worker's task count when nothing is taken. An extra worker takes no half of a deque:
     * a deque full of stolen tasks would keep it from going idle when it is surplus (its own
     * yield queue it hands over instead, [handOverYields]).
     */
    private fun stealHalf(yielded: Boolean): Runnable? {
        if (pool.isStopping() || (isExtra && !yielded)) return null
        val table = pool.workers.slots
        val slot = nextRandom() and (table.length() - 1)
        val victim = table.getAcquire(slot) // pairs with the setRelease in setLocked()
        if (victim == null || victim === this) return null
        val from = if (yielded) victim.yields else victim.deque
        val into = if (yielded) yields else deque
        val queued = from.size()
        if (queued == 0) return null
        val stuck = !ranTasksSinceLastLook(victim, slot)
        val take = minOf(maxOf((queued - into.size()) / 2, if (stuck) 1 else 0), MAX_BALANCE_STEAL)
        var first: Runnable? = null
        var queuedHere = false
        for (k in 0 until take) {
            val task = stealFrom(victim, from).taskOrNull ?: break
            if (first == null) {
                first = task
            } else {
                into.push(task)
                queuedHere = true
                steals-- // counted again by the take that runs it (each run is counted by one take)
            }
        }
        if (queuedHere) pool.signalAfterPublish() // the pushes above, as any push
        return first
    }

    /**
     * Owner only, an extra worker that is surplus, before shutdown: moves its yielded
     * coroutines, oldest first, to the global queue, so that it can go idle (an idle extra
     * worker is not re-scanned) and the workers that stay serve them. While it is needed, an
     * extra worker keeps its own yield queue like a core worker: it may be running in place of
     * one for a long time (an extra that went idle last is the first an ordinary wake-up pops).
     *
     * After shutdown the global queue refuses offers, so the caller does not hand over then and
     * the extra runs its yielded coroutines itself. If shutdown closes the queue during the
     * hand-over, the refused task (the oldest left) is returned, to be run now: pushed back, it
     * would go to the newest end, and a hand-over before every task would keep moving the
     * oldest coroutine to the back, so it would never run. Once the pool is stopping it is
     * pushed back instead, and rejected when this worker exits.
     */
    private fun handOverYields(): Runnable? {
        var handed = false
        var refused: Runnable? = null
        while (true) {
            val task = yields.pollOldest() ?: break
            if (!pool.global.offer(task)) {
                if (pool.isStopping()) yields.push(task) else refused = task
                break
            }
            handed = true
        }
        // One signal for the lot, after the offers, as every publication ends (docs/parking.md);
        // until then this worker, active, holds the obligation to look at the queues.
        if (handed) pool.signalAfterGlobalOffer()
        return refused
    }

    /** The next task to run, or null when the worker should exit (shutdown). */
    private fun findTask(): Runnable? {
        while (true) {
            if (pool.isStopping()) return null
            if (isExtra) { // a core worker pays this one test
                if (!yields.isEmpty() && !pool.isShutdown() && pool.idle.hasSurplus()) {
                    handOverYields()?.let {
                        localPops++
                        return it
                    }
                }
                // Only with empty queues: nobody re-scans for a surplus worker, and a retired
                // one's slot may be reused, so what it left queued would be stranded.
                if (!hasQueuedTasks() && pool.idle.tryPushSurplus(idleNode)) {
                    releaseTaken() // its queues are empty; only it writes their slots
                    if (pool.isShutdown()) pool.tryQuiesce() // it may be the last worker to go idle
                    if (!awaitWakeUp()) return null
                    continue
                }
            }
            val keyed = keyedQueue
            if (keyed != null) {
                if (++keyedTick == KEYED_SWAP) {
                    keyedTick = 0
                    keyedFirst = !keyedFirst
                }
                if (keyedFirst) pollKeyed(keyed)?.let { return it }
            }
            if (++tick == pool.globalCheckInterval) {
                tick = 0
                pollPeriodic()?.let { return it }
            }
            deque.pop()?.let {
                localPops++
                return it
            }
            pollDueTimers()?.let { return it }
            pollGlobal()?.let { return it }
            pool.fair.poll()?.let { return it }
            if (keyed != null) pollKeyed(keyed)?.let { return it }
            pollYielded()?.let { return it }
            takeOthersDueTimers()?.let { return it }
            stealHalf(yielded = false)?.let { return it }
            val spinRounds = pool.options.spinRounds
            // First round: leave a victim's lone task to its owner for a moment (it is usually
            // about to pop it: a coroutine hand-off or a fork it will join), so a wake-up does
            // not turn a local hand-off into a cross-thread one. Later rounds take it only from a
            // victim stuck in one task (scanOthers).
            // A worker that was busy makes this round before counting itself as a searcher:
            // if it finds work at once it never touches ctl, which every push reads. (The
            // count only spares producers a wake-up; parking does not depend on it.)
            scanOthers(skipLoneTasks = spinRounds > 0)?.let { return it }
            pool.idle.beginSearch(idleNode)
            // The search lasts spinRounds x SPIN_WAITS_PER_ROUND spin-waits, and the wait before each
            // round doubles, up to MAX_SPIN_WAITS_PER_ROUND: each probe reads lines that busy
            // victims write at every push, pop and task, so probing every 64 spin-waits slowed
            // a coroutine hand-off on another worker (docs/investigations/2026-11-27-searcher-probes.md).
            var spinWaitsLeft = spinRounds.toLong() * SPIN_WAITS_PER_ROUND
            var waits = SPIN_WAITS_PER_ROUND
            while (spinWaitsLeft > 0) {
                val n = minOf(waits.toLong(), spinWaitsLeft)
                for (k in 0 until n) onSpinWait()
                spinWaitsLeft -= n
                scanOthers()?.let { return it }
                if (keyed != null) pollKeyed(keyed)?.let { return it }
                pollDueTimers()?.let { return it } // a stream of timers from outside comes due while it searches
                takeOthersDueTimers()?.let { return it }
                waits = minOf(waits * 2, MAX_SPIN_WAITS_PER_ROUND)
            }
            if (!parkIdle()) return null
        }
    }

    private fun pollKeyed(keyed: KeyedQueue): Runnable? =
        keyed.poll()?.also { keyedPops++ }

    /** Owner only: buffer for due timers taken from a heap. */
    private val dueTimers = arrayOfNulls<Timer>(TIMER_BATCH)

    /**
     * Takes this worker's own due timers, after taking in those offered by other threads (two
     * volatile reads when it has none pending).
     */
    private fun pollDueTimers(): Runnable? {
        val heap = timers ?: return null
        val offers = heap.hasOffers()
        if (!offers && heap.earliest == null) return null
        val now = System.nanoTime()
        if (!offers && !heap.isDue(now)) return null
        return runDueTimers(heap.pollDue(now, dueTimers, TIMER_BATCH), now)
    }

    /**
     * Takes due timers from another core worker's heap, never waiting for its lock: that
     * worker is busy, blocked, or about to take them itself. The offers of a worker inside a
     * task are taken in first (it may be in a long one).
     */
    private fun takeOthersDueTimers(): Runnable? {
        var now = 0L
        var clockRead = false
        for (i in 0 until pool.parallelism) {
            val victim = pool.workers.getOrNull(i) ?: continue
            val heap = victim.timers ?: continue
            if (victim === this) continue
            if (victim.inTask) pool.takeOffersOf(victim, tryOnly = true)
            if (heap.earliest == null) continue
            if (!clockRead) {
                now = System.nanoTime()
                clockRead = true
            }
            if (!heap.isDue(now)) continue
            val n = heap.tryPollDue(now, dueTimers, TIMER_BATCH)
            if (n > 0) {
                timersStolen += n
                return runDueTimers(n, now)
            }
        }
        return null
    }

    /**
     * The [n] due timers in [dueTimers], earliest first: returns the first to run now and pushes
     * the rest onto the own deque so that they pop in deadline order and can be stolen.
     */
    private fun runDueTimers(n: Int, now: Long): Runnable? {
        if (n == 0) return null
        timersFired += n
        // The batch is in deadline order: the first is the latest.
        val late = now - dueTimers[0]!!.deadline
        if (late >= LATE_TIMER_NANOS) reportLateTimers(dueTimers[0]!!, late, n, now)
        for (k in n - 1 downTo 0) {
            val t = dueTimers[k]!!
            dueTimers[k] = null
            if (k > 0) deque.push(t)
            else {
                if (n > 1) pool.signalAfterPublish()
                return t
            }
        }
        return null
    }

    /** Owner only: when this worker last emitted a [LateTimerEvent], and late batches since. */
    private var lastLateEventAt = 0L
    private var lateBatchesSkipped = 0

    /**
     * A batch of [n] due timers taken [lateNanos] after the earliest one's deadline: one event,
     * at most one per [LATE_TIMER_NANOS] per worker (an overload would otherwise emit one per
     * batch and flood the recording), counting the late batches it stands for.
     */
    private fun reportLateTimers(first: Timer, lateNanos: Long, n: Int, now: Long) {
        val event = LateTimerEvent()
        if (!event.isEnabled) return
        if (lastLateEventAt != 0L && now - lastLateEventAt < LATE_TIMER_NANOS) {
            lateBatchesSkipped++
            return
        }
        lastLateEventAt = now
        event.pool = pool.name
        event.worker = index
        event.timerClass = first.javaClass.simpleName
        event.lateness = lateNanos
        event.timers = n
        event.lateBatchesSkipped = lateBatchesSkipped
        lateBatchesSkipped = 0
        event.commit()
    }

    /** Owner only: buffer for [pollGlobal]'s batches. */
    private val batch = arrayOfNulls<Runnable>(GLOBAL_BATCH)

    /**
     * Takes a run of up to [GLOBAL_BATCH] tasks from the global queue with one CAS: runs the
     * oldest now and pushes the rest onto the own deque (newest first, so they pop in FIFO
     * order and stay stealable), then publishes them like any push.
     */
    private fun pollGlobal(): Runnable? {
        val n = pool.global.pollBatch(batch)
        if (n == 0) return null
        globalPops++
        for (k in n - 1 downTo 1) {
            deque.push(batch[k]!!)
            batch[k] = null
        }
        val first = batch[0]!!
        batch[0] = null
        if (n > 1) pool.signalAfterPublish()
        return first
    }

    /**
     * One steal round over every other worker, plus the global queue. Returns null only when
     * every victim answered Empty or held a single task that this round leaves to its owner; a
     * Retry (a lost race, or a victim's removal hiding tasks) repeats the round. A victim's
     * lone task is left to it when [skipLoneTasks] (the first round), and in later rounds
     * while the victim is making progress ([ranTasksSinceLastLook]): a worker that keeps
     * starting new tasks will pop it soon, the usual case of a coroutine hand-off (the partner
     * resumed, then the running coroutine suspends), and stealing it would split the pair
     * across two cores. A victim stuck in one task loses its lone task at the next round.
     */
    private fun scanOthers(skipLoneTasks: Boolean = false): Runnable? {
        val table = pool.workers.slots
        val mask = table.length() - 1
        while (true) {
            var retry = false
            val r = nextRandom()
            val start = r and mask
            val stride = (r ushr 16) or 1 // odd: visits every slot of the power-of-two table
            var k = 0
            var i = start
            while (k <= mask) {
                val victim = table.getAcquire(i) // pairs with the setRelease in setLocked()
                if (victim != null && victim !== this &&
                    !(victim.queuedTasks() == 1 && (ranTasksSinceLastLook(victim, i) || skipLoneTasks))
                ) {
                    val result = stealFrom(victim)
                    val task = result.taskOrNull
                    if (task != null) return task
                    if (result.isRetry) retry = true
                }
                i = (i + stride) and mask
                k++
            }
            pollGlobal()?.let { return it }
            pool.fair.poll()?.let { return it }
            if (!retry) return null
        }
    }

    /**
     * Owner only, for [scanOthers]: whether [victim] (in table slot [slot]) has started a
     * top-level task since this worker's previous call for that slot; records what it saw.
     * A racy plain read of the victim's counter: a stale value reads as "no progress", which
     * only makes the caller steal, as it would without this check.
     */
    private fun ranTasksSinceLastLook(victim: Worker, slot: Int): Boolean {
        var seen = seenTopLevelTasks
        if (slot >= seen.size) {
            seen = seen.copyOf(pool.workers.slots.length())
            seenTopLevelTasks = seen
        }
        val now = victim.topLevelTasks // plain, racy: pairs with nothing (the owner's plain ++ in run())
        val before = seen[slot]
        seen[slot] = now
        return now != before
    }

    /** Owner only: each table slot's [topLevelTasks] at this worker's last look ([ranTasksSinceLastLook]). */
    private var seenTopLevelTasks = LongArray(0)

    /**
     * Steals the oldest task of [victim]'s deque or, if that is empty and [withYields], of its
     * yield queue, counting it; a stolen [ForkedTask] records this worker as its thief so that
     * a joiner can help by stealing back from here (from the deque only: a joiner must not
     * resume somebody's yielded coroutine nested in its join). Retry (a lost race on the
     * deque, or a removal hiding tasks) only when the yield queue had nothing to take either.
     */
    fun stealFrom(victim: Worker, withYields: Boolean = true): StealResult {
        val result = stealFrom(victim, victim.deque)
        if (withYields && result.taskOrNull == null) {
            val yielded = stealFrom(victim, victim.yields)
            if (!yielded.isEmpty) return yielded
        }
        return result
    }

    /** [stealFrom] of one of [victim]'s two queues, [queue], with the same bookkeeping. */
    private fun stealFrom(victim: Worker, queue: WorkDeque): StealResult {
        stealAttempts++
        val result = queue.steal()
        val task = result.taskOrNull
        if (task != null) {
            steals++
            if (task is ForkedTask<*>) task.stolenBy = this
            val event = StealEvent()
            if (event.isEnabled) {
                event.pool = pool.name
                event.thief = index
                event.victim = victim.index
                event.victimQueueLeft = victim.queuedTasks()
                event.commit()
            }
        }
        return result
    }

    /**
     * Before going idle: drops the references the own queues still hold to tasks thieves took
     * ([WorkDeque.clearTakenIfEmpty]), so an idle worker keeps no finished task alive.
     */
    private fun releaseTaken() {
        deque.clearTakenIfEmpty()
        yields.clearTakenIfEmpty()
    }

    /**
     * Goes idle: push on the idle stack, re-scan, park until woken. Returns false when the pool
     * is stopping or this worker retired, and it should exit.
     */
    private fun parkIdle(): Boolean {
        if (pool.isStopping()) return false
        releaseTaken()
        pool.idle.pushIdle(idleNode)
        // Re-scan after the fenced push (see IdleControl): any work published before a
        // producer read ctl without seeing this worker idle is visible here.
        if (pool.hasVisibleWork() || hasOwnWork()) {
            pool.idle.wakeSelf(idleNode)
            return true
        }
        if (pool.isShutdown()) pool.tryQuiesce() // after close(): the last worker to go idle ends the pool
        return awaitWakeUp()
    }

    /**
     * Parks while this worker is idle ([IdleControl.parkWhileIdle]: a core worker until woken
     * or until its earliest timer is due, an extra one for its keep-alive, then it retires),
     * counting the park.
     * Returns false if it retired.
     */
    private fun awaitWakeUp(): Boolean {
        val event = ParkEvent()
        event.begin()
        val keepAlive = if (isExtra) pool.keepAliveNanos else Long.MAX_VALUE
        when (pool.idle.parkWhileIdle(idleNode, keepAlive, pool, hasOwnWork, nanosToOwnDeadline)) {
            IdleControl.PARK_CLAIMED_BEFORE -> return true
            IdleControl.PARK_RETIRED -> {
                parks++
                retired = true
                return false
            }
        }
        parks++
        wakeups++
        if (event.shouldCommit()) {
            event.pool = pool.name
            event.worker = index
            event.commit()
        }
        return true
    }

    private fun nextRandom(): Int {
        var x = random // xorshift32
        x = x xor (x shl 13)
        x = x xor (x ushr 17)
        x = x xor (x shl 5)
        random = x
        return x
    }

    override fun toString(): String = name

    private companion object {
        /** Tasks after which a core worker swaps the order of its keyed queue and shared work. */
        const val KEYED_SWAP = 32

        /** Most tasks [stealHalf] takes from one other worker at once. */
        const val MAX_BALANCE_STEAL = 256

        /** Tasks taken from the global queue in one claim. */
        const val GLOBAL_BATCH = 32

        /** Spin-waits before a search's first round (about 1.6 us), and the unit of [StealingOptions.spinRounds]. */
        const val SPIN_WAITS_PER_ROUND = 64

        /** Most spin-waits between two rounds of a search (the wait doubles from [SPIN_WAITS_PER_ROUND]). */
        const val MAX_SPIN_WAITS_PER_ROUND = 512

        /** Due timers taken from a heap at once. */
        const val TIMER_BATCH = 32

        /** A timer that fires this late (from its deadline to being taken) is reported as a [LateTimerEvent]. */
        const val LATE_TIMER_NANOS = 20_000_000L
    }
}
