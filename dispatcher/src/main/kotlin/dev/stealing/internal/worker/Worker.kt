package dev.stealing.internal.worker

import dev.stealing.internal.idle.IdleNode
import dev.stealing.internal.idle.closeLeakedRegion
import dev.stealing.internal.idle.endPresumptionIfAny
import dev.stealing.internal.idle.enterBlocking
import dev.stealing.internal.idle.exitBlocking
import dev.stealing.internal.jvm.CpuPinning
import dev.stealing.internal.queue.KeyedQueue
import dev.stealing.internal.queue.StealResult
import dev.stealing.internal.queue.TaskMatcher
import dev.stealing.internal.queue.WorkDeque
import dev.stealing.internal.timer.TimerHeap

/**
 * A worker thread of a pool ([WorkerHost]): its queues, its run loop, and nesting.
 *
 * Its jobs, one class each, all in this package and all owned by this worker's thread:
 * - where it looks for its next task, in order, and when it gives up and parks ([WorkFinder]);
 * - stealing: steal rounds over the other workers and take-half balancing ([Thief]);
 * - its own timers and other workers' due ones ([WorkerTimers]);
 * - going idle and being woken ([WorkerParking], over the pool's idle control);
 * - its statistics ([WorkerCounters]).
 *
 * Workers with an index below `parallelism` are *core* workers and park without a time limit
 * (or until their earliest timer). The others are *extra* threads started to compensate for
 * blocked workers: while more than `parallelism` workers are active they go idle between
 * tasks, and once idle for the keep-alive they retire.
 *
 * Each property says who touches it; none is written from outside this package. Most are
 * owner only; [counters], [inTask] and [topLevelTasks] are written by this thread and read
 * racily by others (the stats snapshot, the starvation monitor, thieves).
 */
internal class Worker(
    val pool: WorkerHost,
    val index: Int,
) : Thread("${pool.name}-worker-$index") {
    val deque = WorkDeque(pool.config.initialDequeCapacity, owner = this)

    /**
     * Coroutines that called `yield()` on this worker, oldest first: the owner pushes (the
     * pool's `executeYield`, and the half it takes from a longer yield queue in
     * [Thief.stealHalf]) and takes the oldest ([WorkDeque.pollOldest]); thieves steal the
     * oldest, as from [deque]. An extra worker hands it to the global queue when surplus
     * ([WorkFinder]). A yield stays on its worker, with its caches, and does not go through
     * the global queue that every worker shares.
     */
    val yields = WorkDeque(pool.config.initialDequeCapacity, owner = this)

    /** This worker's idle and block state; written only by idle control. */
    val idleNode = IdleNode(index, this)

    /** An extra thread beyond `parallelism`: surplus-parks and retires after its keep-alive. */
    val isExtra = index >= pool.parallelism

    /** Keyed work only this worker runs (`StealingDispatcher.affinity`); core workers only. */
    val keyedQueue: KeyedQueue? = if (isExtra) null else KeyedQueue()

    /**
     * Timers this worker fires ([TimerHeap]); core workers only (an extra worker may retire,
     * so the timers it creates go to a core worker's heap).
     */
    val timers: TimerHeap? = if (isExtra) null else TimerHeap()

    /** Statistics: written by this thread only, read racily by the stats snapshot. */
    val counters = WorkerCounters()

    /**
     * Owner writes, the starvation monitor reads racily: this worker is inside a top-level task
     * (not searching, parking, or woken but not yet scheduled). Plain, to keep the hot loop
     * free of fences; the monitor only needs to see it eventually.
     */
    var inTask = false
        private set

    /**
     * Top-level tasks started (not counting nested ones, which [WorkerCounters.executed]
     * counts): owner writes, the monitor and thieves read racily to see a worker still inside
     * the same task.
     */
    var topLevelTasks = 0L
        private set

    /** Where [inlineDepth] is kept: on a cache line of its own ([NestingDepth] says why). */
    private val nesting = NestingDepth()

    /** Owner only: nesting depth of tasks run inline or while helping a join ([nested]); 0 in a top-level task. */
    val inlineDepth: Int get() = nesting.depth

    /** The CPU this core worker is pinned to (`PoolConfig.pinThreads`), or -1. */
    @Volatile var pinnedCpu = -1
        private set

    /**
     * Owner only: a task taken from a queue whose run an Error in the worker's own loop came
     * before ([runUntilExit]); the loop runs it first when it starts again. Null otherwise.
     */
    private var heldTask: Runnable? = null

    /** Owner only: set when this worker left the pool by retiring (already uncounted). */
    private var retired = false

    internal val thief = Thief(this)
    internal val timerDuty = WorkerTimers(this)
    internal val parking = WorkerParking(this)
    internal val finder = WorkFinder(this)

    init {
        isDaemon = pool.config.daemon
        contextClassLoader = pool.threadContextClassLoader // not the starting thread's (WorkerHost says why)
    }

    override fun run() {
        if (pool.config.pinThreads && !isExtra) {
            try {
                pinnedCpu = CpuPinning.pinCurrentThread(index, pool.pinnableCpus!!)
            } catch (e: Throwable) { // the pool runs unpinned; stats() says why
                pool.pinningFailed(e.message ?: e.toString())
            }
        }
        try {
            while (true) {
                try {
                    runUntilExit()
                    break
                } catch (e: Throwable) {
                    if (!recoverFromLoopError(e)) throw e
                }
            }
        } finally {
            heldTask?.let { // exiting after an Error it could not recover from: the task stays queued, for thieves
                heldTask = null
                deque.push(it) // (or, if the pool is stopping, for workerExited to reject with the rest)
                pool.signalAfterPublish()
            }
            if (!retired) pool.idle.exitRunning(idleNode)
            pool.workerExited(this, retired)
        }
    }

    /** The loop: finds a task, runs it, and so on, until [WorkFinder.findTask] says exit. */
    private fun runUntilExit() {
        val finder = finder
        val idle = pool.idle
        val node = idleNode
        while (true) {
            var task = heldTask?.also { heldTask = null } ?: finder.findTask() ?: return
            try {
                idle.endSearch(node) // may signal: an Error there must not lose the task just taken
            } catch (e: Throwable) {
                heldTask = task // run first when the loop starts again (recoverFromLoopError)
                throw e
            }
            // Then the own deque's newest tasks, one after another, for as long as findTask
            // would return them next anyway (nextLocal), without its whole look each time:
            // ForkJoinPool's workers also run their local tasks in a loop of their own. A
            // fan-out of no-op tasks on one worker spent twice ForkJoinPool's time between
            // tasks before (docs/investigations/2026-11-29-fan-out-per-task.md).
            do {
                topLevelTasks++
                inTask = true
                clearStrayInterrupt()
                runTask(task)
                idle.closeLeakedRegion(node)
                inTask = false
                task = finder.nextLocal() ?: break
            } while (true)
        }
    }

    /**
     * An Error escaped this worker's own loop, outside any task (a task's failure is caught in
     * [runTask]): an `OutOfMemoryError` in its search, a signal of its own cut short, or a look
     * inside an idle transition, thrown once the transition has ended (`WorkerParking.parkIdle`;
     * docs/parking.md, "Errors in the signalling path"). The worker reports it to the pool's
     * failure handler and runs its loop again on the same thread, so its deque, yield queue,
     * keyed queue and timers stay served and its slot never goes without a thread.
     *
     * That is what retiring the worker and starting a replacement would promise, without its
     * race: keyed producers and timer offerers find their queue through the worker in the slot,
     * and one that read the old worker would offer into queues a replacement never looks at.
     * The thread itself has nothing left to replace: the Error unwound its stack, and the
     * worker's state is in the fields below, not on it. It was counted as active, and searching
     * exactly when its flag says so (both change with ctl first, the flag after), so the counts
     * need no repair; a blocking region or presumption left open ends here. False when it
     * cannot go on: the pool is stopping, or the Error escaped an idle transition, which no
     * Error should (a broken invariant: the worker's idle state is half changed, and it exits).
     */
    private fun recoverFromLoopError(e: Throwable): Boolean {
        inTask = false
        if (parking.inIdleTransition || pool.isStopping()) return false
        val idle = pool.idle
        idle.closeLeakedRegion(idleNode)
        idle.endPresumptionIfAny(idleNode)
        reportLoopError(e)
        return true
    }

    /** Reports [e], an Error of this worker's own loop, to the pool's failure handler. */
    internal fun reportLoopError(e: Throwable) {
        pool.reportFailure(LoopFailure(this), e)
    }

    /** What [reportLoopError] reports as the failed task: this worker's own loop. */
    private class LoopFailure(private val worker: Worker) : Runnable {
        override fun run() {}
        override fun toString(): String = "the loop of $worker"
    }

    /** Owner only ([WorkerParking]): this worker retired idle; it exits without leaving idle control again. */
    internal fun markRetired() {
        retired = true
    }

    /**
     * Before a top-level task: an interrupt left over from the previous task (or from a cancel
     * aimed at it) must not reach this one, as in `ThreadPoolExecutor`. Unless the pool is
     * stopping: then the interrupt is the pool's stop and stays (re-asserted if this cleared it
     * after the stop sent it; the stop writes the run state before it interrupts). Not for
     * nested runs (inlined or helped tasks), whose caller's interrupt status belongs to the
     * caller.
     */
    private fun clearStrayInterrupt() {
        if (interrupted() && pool.isStopping()) interrupt()
    }

    /** Runs [task], counting it; a failure goes to the pool's handler and the worker lives on. */
    fun runTask(task: Runnable) {
        counters.countExecuted()
        try {
            task.run()
        } catch (e: Throwable) {
            counters.countFailed()
            pool.reportFailure(task, e)
        }
        endPresumption()
    }

    /** After a task (or a nested one) ended: the starvation monitor's presumption of blocking, if any, ends. */
    fun endPresumption() {
        pool.idle.endPresumptionIfAny(idleNode)
    }

    /** Owner only: enters a blocking region (`blocking { }`, a blocking join); see idle control's `enterBlocking`. */
    fun enterBlocking() = pool.idle.enterBlocking(idleNode)

    /** Owner only: leaves the blocking region entered by [enterBlocking]. */
    fun exitBlocking() = pool.idle.exitBlocking(idleNode)

    /** Owner only: whether another task may be run nested without risking the stack. */
    fun canNest(): Boolean = inlineDepth < pool.config.maxInlineDepth

    /**
     * Owner only: runs [block] one nesting level deeper. With [enterNested] and [exitNested],
     * the one place that keeps [inlineDepth]: wait-inlining (`awaitInline`), a join that runs
     * or helps, and `forkJoin` all nest through here, after checking [canNest].
     */
    inline fun <R> nested(block: () -> R): R {
        enterNested()
        try {
            return block()
        } finally {
            exitNested()
        }
    }

    /**
     * For [nested], and for the join of a forked task that runs the task it popped itself
     * (`JoinableTask.runNestedOn`, a call of its own rather than an inline block, for the JIT).
     */
    fun enterNested() {
        nesting.depth++
    }

    /** Ends what [enterNested] began. */
    fun exitNested() {
        nesting.depth--
    }

    /** Owner only: runs [task] nested in the current one (wait-inlining or helping). */
    fun runNested(task: Runnable) {
        nested { runTask(task) }
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
     * Owner only: pushes [task] (a fork, or the published half of a `forkJoin`) onto this
     * worker's deque and signals unless an older task is still queued below it
     * ([WorkerHost.signalAfterFork]); false, and nothing queued, when the pool is stopping. Its own
     * method, separate from the pool's general routing, for its own JIT profile: a fork/join
     * loop compiled with the profile of coroutine dispatches (outside submissions, frequent
     * wake-ups) inlines their cold paths and runs measurably slower
     * (docs/investigations/2026-11-24-fork-join.md).
     */
    fun pushFork(task: Runnable): Boolean {
        if (pool.isStopping()) return false
        deque.push(task)
        pool.signalAfterFork(deque)
        return true
    }

    /** Owner only: steals from [victim] ([Thief.stealFrom]); a joiner helping the thief of its task. */
    fun stealFrom(victim: Worker, withYields: Boolean = true): StealResult = thief.stealFrom(victim, withYields)

    /** Any thread: whether this worker's deque or yield queue holds a task. */
    fun hasQueuedTasks(): Boolean = !deque.isEmpty() || !yields.isEmpty()

    /** Any thread: tasks in this worker's deque and yield queue. */
    fun queuedTasks(): Int = deque.size() + yields.size()

    override fun toString(): String = name
}
