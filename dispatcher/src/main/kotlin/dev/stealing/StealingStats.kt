package dev.stealing

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
 * @property localPops tasks a worker took from its own deque.
 * @property globalPops tasks taken from the global queue.
 * @property stealAttempts steal attempts on other workers' deques.
 * @property steals successful steals.
 * @property inlined children run inline by `awaitInline` or `ForkedTask.join` instead of waiting.
 * @property helped tasks run by a joining worker while its joined task ran elsewhere.
 * @property blockedJoins joins that had to block (or suspend) after inlining and helping failed.
 * @property parks times a worker parked.
 * @property unparks times a parked worker was woken.
 * @property failed tasks that threw (Executor path).
 * @property cancelled forked tasks cancelled while queued and discarded by a worker unrun.
 * @property rejected tasks rejected because the pool was shut down.
 * @property globalQueueDepth tasks waiting in the global queue.
 * @property workerQueueDepths tasks waiting in each started worker's deque.
 * @property affinityPops keyed tasks workers took from their keyed queues.
 * @property affinityQueueDepths keyed tasks waiting in each core worker's keyed queue.
 * @property pinning CPU pinning of core workers ([StealingOptions.pinThreads]): `off`,
 *   `on: CPUs [...]`, or why it did not take (the pool then runs unpinned).
 * @property fairQueues each fair queue still in the rotation: name, weight, depth, executed.
 * @property state `running`, `shutting down` (closed; accepted work still runs), `stopping`
 *   (`shutdownNow`), `terminating` (everything ran; workers are exiting) or `terminated`.
 */
public class StealingStats internal constructor(
    public val name: String,
    public val parallelism: Int,
    public val threads: Int,
    public val idleThreads: Int,
    public val blockedThreads: Int,
    public val maxThreads: Int,
    public val injectedThreads: Long,
    public val retiredThreads: Long,
    public val presumedBlocked: Long,
    public val executed: Long,
    public val localPops: Long,
    public val globalPops: Long,
    public val stealAttempts: Long,
    public val steals: Long,
    public val inlined: Long,
    public val helped: Long,
    public val blockedJoins: Long,
    public val parks: Long,
    public val unparks: Long,
    public val failed: Long,
    public val cancelled: Long,
    public val rejected: Long,
    public val globalQueueDepth: Int,
    public val workerQueueDepths: List<Int>,
    public val affinityPops: Long,
    public val affinityQueueDepths: List<Int>,
    public val fairQueues: List<FairQueueStats>,
    public val pinning: String,
    public val state: String,
) {
    /** Tasks queued anywhere in the pool. */
    public val queuedTasks: Int get() = globalQueueDepth + workerQueueDepths.sum() + affinityQueueDepths.sum() +
            fairQueues.sumOf { it.depth }

    override fun toString(): String =
        "StealingStats(name=$name, state=$state, parallelism=$parallelism, threads=$threads, " +
            "idle=$idleThreads, blocked=$blockedThreads, injected=$injectedThreads, retired=$retiredThreads, " +
            "presumedBlocked=$presumedBlocked, executed=$executed, localPops=$localPops, globalPops=$globalPops, " +
            "steals=$steals/$stealAttempts, inlined=$inlined, helped=$helped, blockedJoins=$blockedJoins, " +
            "parks=$parks, unparks=$unparks, failed=$failed, cancelled=$cancelled, rejected=$rejected, " +
            "globalQueue=$globalQueueDepth, workerQueues=$workerQueueDepths, affinityPops=$affinityPops, " +
            "affinityQueues=$affinityQueueDepths, fairQueues=$fairQueues, pinning=$pinning)"
}
