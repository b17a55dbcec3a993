package dev.stealing.internal.pool

/**
 * What the pool's counters and queues read at one moment ([PoolStats.snapshot]), in the engine's
 * own types: the public `StealingStats` is made from it at the API's edge, which documents each
 * figure under the same name. The pinning is given as asked for, the CPUs pinned and why not;
 * the run state as a [RunState].
 */
internal class PoolSnapshot(
    val name: String,
    val parallelism: Int,
    val threads: Int,
    val idleThreads: Int,
    val blockedThreads: Int,
    val maxThreads: Int,
    val injectedThreads: Long,
    val retiredThreads: Long,
    val presumedBlocked: Long,
    val executed: Long,
    val localPops: Long,
    val globalPops: Long,
    val stealAttempts: Long,
    val steals: Long,
    val inlined: Long,
    val helped: Long,
    val blockedJoins: Long,
    val parks: Long,
    val unparks: Long,
    val failed: Long,
    val cancelled: Long,
    val rejected: Long,
    val globalQueueDepth: Int,
    val workerQueueDepths: List<Int>,
    val affinityPops: Long,
    val affinityQueueDepths: List<Int>,
    val forks: Long,
    val forksInlined: Long,
    val forksStolen: Long,
    val loopPieces: Long,
    val loopSplits: Long,
    val fairQueues: List<FairQueueSnapshot>,
    val pendingTimers: List<Int>,
    val timersFromOutside: Long,
    val timersFired: Long,
    val timersStolen: Long,
    val timersCancelled: Long,
    val pinThreads: Boolean,
    val pinnedCpus: List<Int>,
    val pinningFailure: String?,
    val runState: Int,
)

/** One fair queue in a [PoolSnapshot] (the public `FairQueueStats`, under the same names). */
internal class FairQueueSnapshot(
    val name: String,
    val weight: Int,
    val depth: Int,
    val executed: Long,
    val discarded: Long,
    val closed: Boolean,
)
