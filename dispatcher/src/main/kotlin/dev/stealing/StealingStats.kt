package dev.stealing

import dev.stealing.internal.pool.PoolSnapshot
import dev.stealing.internal.pool.RunState

/**
 * An immutable snapshot of a pool's counters, taken by [StealingDispatcher.stats]. Counters are
 * summed from per-worker fields without stopping the workers, so a snapshot of a busy pool is
 * consistent per counter, not across counters.
 *
 * @property name the pool's name.
 * @property parallelism the target number of workers.
 * @property threads worker threads currently alive (they start lazily).
 * @property idleThreads workers parked or about to park.
 * @property blockedThreads workers inside a blocking region, or presumed blocked by the
 *   starvation monitor (they do not count toward `parallelism`).
 * @property maxThreads most threads the pool may run (`parallelism` plus extras).
 * @property injectedThreads extra threads started so far to compensate for blocked workers.
 * @property retiredThreads extra threads that retired after their keep-alive.
 * @property presumedBlocked times the starvation monitor found a worker stuck while work waited.
 * @property executed tasks run by workers (including inlined and helped ones).
 * @property localPops tasks a worker took from its own deque or yield queue.
 * @property globalPops tasks taken from the global queue.
 * @property stealAttempts steal attempts on other workers' deques and yield queues.
 * @property steals tasks taken from other workers and run by the taker (of several taken at once,
 *   those queued again are counted by the take that runs them, so each run counts once).
 * @property inlined children run inline by `awaitInline` or `ForkedTask.join` instead of waiting.
 * @property helped tasks run by a joining worker while its joined task ran elsewhere.
 * @property blockedJoins joins that had to block (or suspend) after inlining and helping failed.
 * @property parks times a worker parked.
 * @property unparks times a parked worker was woken.
 * @property failed tasks that threw (Executor path).
 * @property cancelled forked tasks cancelled while queued and discarded by a worker unrun.
 * @property rejected tasks rejected because the pool was shut down.
 * @property globalQueueDepth tasks waiting in the global queue.
 * @property workerQueueDepths tasks waiting in each started worker's deque and yield queue
 *   (coroutines that called `yield()` there).
 * @property affinityPops keyed tasks workers took from their keyed queues.
 * @property affinityQueueDepths keyed tasks waiting in each core worker's keyed queue.
 * @property forks every fork: the tasks forked by [StealingDispatcher.fork] and [ForkedTask.fork]
 *   (Java's fork/join, from a worker or from outside the pool), and the halves that [forkJoin]
 *   (and [forkJoinAll]) and the blocking [ParallelOperations.forkJoin] offered to other workers.
 *   Tasks from the executor's `submit` are not forks.
 * @property forksInlined of the halves that [forkJoin] and [ParallelOperations.forkJoin] offered,
 *   those their caller took back and ran itself as a plain call (or dropped, when the other half
 *   had failed or the caller was cancelled). A [ForkedTask] that its join ran in place counts in
 *   [inlined] instead.
 * @property forksStolen of the halves that [forkJoin] and [ParallelOperations.forkJoin] offered,
 *   those a worker took and ran (a [forkJoin] half as a coroutine of its own, on another worker
 *   or on the same one while the caller was suspended). A stolen [ForkedTask] counts in [steals]
 *   instead.
 * @property loopPieces pieces of parallel loops and sorts run ([parallelForEach],
 *   [parallelMap], [parallelFold], [parallelSort], [StealingDispatcher.parallelFor]): each range a
 *   worker ran from its start, including the whole range of a loop that was never split.
 * @property loopSplits of those pieces, the halves that a running piece split off and offered to
 *   other workers (taken back by the piece itself when nobody stole them).
 * @property pinning CPU pinning of core workers ([StealingOptions.pinThreads]): whether it is
 *   on, the CPUs, and why it did not take where it did not.
 * @property fairQueues each fair queue still in the rotation, a [FairQueueStats]: name, weight,
 *   depth, executed, discarded, closed.
 * @property pendingTimers timers waiting for their deadline (`delay`, `withTimeout`, delayed
 *   and periodic tasks), per core worker that keeps them.
 * @property timersFromOutside timers created by threads outside the pool so far (each kept by
 *   a core worker chosen round-robin).
 * @property timersFired timers that came due and were taken to run.
 * @property timersStolen of [timersFired], those taken from a busy or blocked worker's timers by
 *   another worker.
 * @property timersCancelled timers cancelled before they came due (a `withTimeout` that ended
 *   first, a cancelled `delay` or delayed task), each removed from its worker's timers at once.
 * @property state where the pool is in its life cycle.
 */
public sealed class StealingStats(snapshot: PoolSnapshot) {
    public val name: String = snapshot.name
    public val parallelism: Int = snapshot.parallelism
    public val threads: Int = snapshot.threads
    public val idleThreads: Int = snapshot.idleThreads
    public val blockedThreads: Int = snapshot.blockedThreads
    public val maxThreads: Int = snapshot.maxThreads
    public val injectedThreads: Long = snapshot.injectedThreads
    public val retiredThreads: Long = snapshot.retiredThreads
    public val presumedBlocked: Long = snapshot.presumedBlocked
    public val executed: Long = snapshot.executed
    public val localPops: Long = snapshot.localPops
    public val globalPops: Long = snapshot.globalPops
    public val stealAttempts: Long = snapshot.stealAttempts
    public val steals: Long = snapshot.steals
    public val inlined: Long = snapshot.inlined
    public val helped: Long = snapshot.helped
    public val blockedJoins: Long = snapshot.blockedJoins
    public val parks: Long = snapshot.parks
    public val unparks: Long = snapshot.unparks
    public val failed: Long = snapshot.failed
    public val cancelled: Long = snapshot.cancelled
    public val rejected: Long = snapshot.rejected
    public val globalQueueDepth: Int = snapshot.globalQueueDepth
    public val workerQueueDepths: List<Int> = snapshot.workerQueueDepths
    public val affinityPops: Long = snapshot.affinityPops
    public val affinityQueueDepths: List<Int> = snapshot.affinityQueueDepths
    public val forks: Long = snapshot.forks
    public val forksInlined: Long = snapshot.forksInlined
    public val forksStolen: Long = snapshot.forksStolen
    public val loopPieces: Long = snapshot.loopPieces
    public val loopSplits: Long = snapshot.loopSplits
    public val fairQueues: List<FairQueueStats> = snapshot.fairQueues.map(::fairQueueStatsOf)
    public val pendingTimers: List<Int> = snapshot.pendingTimers
    public val timersFromOutside: Long = snapshot.timersFromOutside
    public val timersFired: Long = snapshot.timersFired
    public val timersStolen: Long = snapshot.timersStolen
    public val timersCancelled: Long = snapshot.timersCancelled
    public val pinning: Pinning = pinningOf(snapshot)
    public val state: State = stateOf(snapshot.runState)

    /** Tasks queued anywhere in the pool. */
    public val queuedTasks: Int get() = globalQueueDepth + workerQueueDepths.sum() + affinityQueueDepths.sum() +
            fairQueues.sumOf { it.depth }

    /**
     * Every figure, each labelled with its property's name, for example `StealingStats(name=compute,
     * state=RUNNING, parallelism=2, threads=2, ..., steals=10, stealAttempts=2033, ...)`.
     */
    override fun toString(): String =
        "StealingStats(name=$name, state=$state, parallelism=$parallelism, threads=$threads, " +
            "idleThreads=$idleThreads, blockedThreads=$blockedThreads, maxThreads=$maxThreads, " +
            "injectedThreads=$injectedThreads, retiredThreads=$retiredThreads, presumedBlocked=$presumedBlocked, " +
            "executed=$executed, localPops=$localPops, globalPops=$globalPops, steals=$steals, " +
            "stealAttempts=$stealAttempts, inlined=$inlined, helped=$helped, blockedJoins=$blockedJoins, " +
            "parks=$parks, unparks=$unparks, failed=$failed, cancelled=$cancelled, rejected=$rejected, " +
            "queuedTasks=$queuedTasks, globalQueueDepth=$globalQueueDepth, workerQueueDepths=$workerQueueDepths, " +
            "affinityPops=$affinityPops, affinityQueueDepths=$affinityQueueDepths, forks=$forks, " +
            "forksInlined=$forksInlined, forksStolen=$forksStolen, loopPieces=$loopPieces, loopSplits=$loopSplits, fairQueues=$fairQueues, " +
            "pendingTimers=$pendingTimers, timersFromOutside=$timersFromOutside, timersFired=$timersFired, " +
            "timersStolen=$timersStolen, timersCancelled=$timersCancelled, pinning=$pinning)"

    /** Where a pool is in its life cycle; each state follows the one before it. */
    public enum class State {
        /** Accepting and running work. */
        RUNNING,

        /** Closed or shut down: no new work is accepted; work already accepted still runs. */
        SHUTTING_DOWN,

        /** `shutdownNow()` was called: work not started was handed back or cancelled. */
        STOPPING,

        /** Every accepted task has ended; the worker threads are exiting. */
        TERMINATING,

        /** Every worker thread has exited. */
        TERMINATED,
    }

    /**
     * CPU pinning of the core workers ([StealingOptions.pinThreads]).
     *
     * @property mode [Mode.OFF], [Mode.ON] (every core worker started so far is pinned) or
     *   [Mode.PARTIAL] (some are, some could not be).
     * @property cpus the CPUs the pinned core workers run on, in worker order; empty when off.
     * @property reason why pinning did not take (the workers concerned run unpinned); null when
     *   it took everywhere or was not asked for.
     */
    public sealed class Pinning(
        public val mode: Mode,
        public val cpus: List<Int>,
        public val reason: String?,
    ) {
        /** Whether core workers are pinned. */
        public enum class Mode {
            /** No worker is pinned: [StealingOptions.pinThreads] is false, or pinning was refused. */
            OFF,

            /** Every core worker started so far is pinned to a CPU. */
            ON,

            /** Some core workers are pinned, others could not be. */
            PARTIAL,
        }

        /**
         * Whether [other] is a [Pinning] with the same mode, CPUs and reason.
         *
         * @param other the object to compare with.
         */
        override fun equals(other: Any?): Boolean =
            other is Pinning && mode == other.mode && cpus == other.cpus && reason == other.reason

        override fun hashCode(): Int = (mode.hashCode() * 31 + cpus.hashCode()) * 31 + reason.hashCode()

        /** `off`, `off (not allowed: <reason>)`, `on: CPUs [0, 1]` or `partial: CPUs [0] (<reason>)`. */
        override fun toString(): String = when (mode) {
            Mode.OFF -> if (reason == null) "off" else "off (not allowed: $reason)"
            Mode.ON -> "on: CPUs $cpus"
            Mode.PARTIAL -> "partial: CPUs $cpus ($reason)"
        }
    }
}

/** The public state of a pool in run state [runState] (a `RunState`). */
private fun stateOf(runState: Int): StealingStats.State = when (runState) {
    RunState.RUNNING -> StealingStats.State.RUNNING
    RunState.SHUTDOWN -> StealingStats.State.SHUTTING_DOWN
    RunState.STOP -> StealingStats.State.STOPPING
    RunState.TIDYING -> StealingStats.State.TERMINATING
    else -> StealingStats.State.TERMINATED
}

/** Off, or which core workers are pinned to which CPUs, or why pinning did not take. */
private fun pinningOf(s: PoolSnapshot): StealingStats.Pinning {
    val failure = s.pinningFailure
    val mode = when {
        !s.pinThreads -> return SnapshotPinning(StealingStats.Pinning.Mode.OFF, emptyList(), null)
        failure != null && s.pinnedCpus.isEmpty() -> StealingStats.Pinning.Mode.OFF
        failure != null -> StealingStats.Pinning.Mode.PARTIAL
        else -> StealingStats.Pinning.Mode.ON
    }
    return SnapshotPinning(mode, s.pinnedCpus, failure)
}

/**
 * The one implementation of [StealingStats.Pinning], which is sealed so that Java cannot
 * construct one (a sealed class's constructor is private in the bytecode).
 */
private class SnapshotPinning(mode: StealingStats.Pinning.Mode, cpus: List<Int>, reason: String?) :
    StealingStats.Pinning(mode, cpus, reason)

/**
 * The figures of [snapshot], the engine's snapshot of a pool. [StealingStats] is sealed and this
 * is its one implementation, so that its constructor, which takes an engine type, is not Java's
 * to call: a sealed class's constructor is private in the bytecode.
 */
@JvmSynthetic
internal fun stealingStatsOf(snapshot: PoolSnapshot): StealingStats = PoolStealingStats(snapshot)

/** See [stealingStatsOf]. */
private class PoolStealingStats(snapshot: PoolSnapshot) : StealingStats(snapshot)
