package dev.stealing.internal.worker

/**
 * One worker's statistics counters, and the pool's sums of them.
 *
 * A worker's own counters ([Worker.counters]) are plain fields written only by that worker's
 * thread, through the methods below (a plain increment: the hot loop pays no fence), and read
 * racily by the stats snapshot, which may see a slightly stale value but never a torn one on a
 * 64-bit JVM. A sum ([addAll]) is a separate instance owned by its caller (the pool keeps one,
 * under its lock, for the workers that have exited), so every counter of the snapshot only grows.
 */
internal class WorkerCounters {
    var executed = 0L; private set
    var localPops = 0L; private set
    var globalPops = 0L; private set
    var stealAttempts = 0L; private set
    var steals = 0L; private set
    var parks = 0L; private set
    var wakeups = 0L; private set
    var inlined = 0L; private set
    var helped = 0L; private set
    var blockedJoins = 0L; private set
    var failed = 0L; private set
    var cancelledSkipped = 0L; private set
    var keyedPops = 0L; private set
    var forks = 0L; private set // ForkedTasks forked and forkJoin halves published on this worker
    var forksInlined = 0L; private set // ... taken back by a caller running on this worker
    var forksStolen = 0L; private set // ... claimed by this worker and run as a coroutine
    var timersFired = 0L; private set
    var timersStolen = 0L; private set
    var timersCancelled = 0L; private set
    var loopPieces = 0L; private set // pieces of parallel loops and sorts run on this worker
    var loopSplits = 0L; private set // ... and halves this worker split off and offered

    /**
     * Set under the pool's lock when this worker has exited and these counters were added to the
     * pool's sum; read under that lock by the stats snapshot, which then skips the worker.
     */
    var folded = false; private set

    fun countExecuted() { executed++ }
    fun countLocalPop() { localPops++ }
    fun countGlobalPop() { globalPops++ }
    fun countStealAttempt() { stealAttempts++ }
    fun countSteal() { steals++ }

    /** A stolen task was queued here instead of run: the take that runs it counts it again. */
    fun countStealRequeued() { steals-- }
    fun countPark() { parks++ }
    fun countWakeup() { wakeups++ }
    fun countInlined() { inlined++ }
    fun countHelped() { helped++ }
    fun countBlockedJoin() { blockedJoins++ }
    fun countFailed() { failed++ }
    fun countCancelledSkipped() { cancelledSkipped++ }
    fun countKeyedPop() { keyedPops++ }
    fun countFork() { forks++ }
    fun countForkInlined() { forksInlined++ }
    fun countForkStolen() { forksStolen++ }
    fun countTimersFired(n: Int) { timersFired += n }
    fun countTimersStolen(n: Int) { timersStolen += n }
    fun countTimerCancelled() { timersCancelled++ }
    fun countLoopPiece() { loopPieces++ }
    fun countLoopSplit() { loopSplits++ }

    /** Under the pool's lock, once the worker has exited: its counters are in the pool's sum now. */
    fun markFolded() { folded = true }

    /** Adds [o]'s counters to these (racy reads when [o] belongs to a live worker). */
    fun addAll(o: WorkerCounters) {
        executed += o.executed; localPops += o.localPops; globalPops += o.globalPops
        stealAttempts += o.stealAttempts; steals += o.steals; parks += o.parks; wakeups += o.wakeups
        inlined += o.inlined; helped += o.helped; blockedJoins += o.blockedJoins; failed += o.failed
        cancelledSkipped += o.cancelledSkipped; keyedPops += o.keyedPops
        forks += o.forks; forksInlined += o.forksInlined; forksStolen += o.forksStolen
        timersFired += o.timersFired; timersStolen += o.timersStolen; timersCancelled += o.timersCancelled
        loopPieces += o.loopPieces; loopSplits += o.loopSplits
    }
}
