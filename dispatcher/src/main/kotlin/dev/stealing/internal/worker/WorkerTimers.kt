package dev.stealing.internal.worker

import dev.stealing.internal.jvm.LateTimerEvent
import dev.stealing.internal.jvm.jfrStarted
import dev.stealing.internal.timer.Timer

/**
 * A worker's part in the timers: taking its own due timers ([pollDueTimers]) and other core
 * workers' ([takeOthersDueTimers]), and running a batch of them ([runDueTimers]). Owned by its
 * [worker]'s thread; every field is owner only. Where a timer is placed, and the heap itself,
 * are the pool's and `TimerHeap`'s (docs/timers.md).
 */
internal class WorkerTimers(private val worker: Worker) {
    private val pool = worker.pool

    /** Buffer for due timers taken from a heap. */
    private val dueTimers = arrayOfNulls<Timer>(TIMER_BATCH)

    /** When this worker last emitted a [LateTimerEvent], and late batches since. */
    private var lastLateEventAt = 0L
    private var lateBatchesSkipped = 0

    /**
     * Takes this worker's own due timers, after taking in those offered by other threads (two
     * volatile reads when it has none pending).
     */
    fun pollDueTimers(): Runnable? {
        val heap = worker.timers ?: return null
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
    fun takeOthersDueTimers(): Runnable? {
        var now = 0L
        var clockRead = false
        for (i in 0 until pool.parallelism) {
            val victim = pool.workers.getOrNull(i) ?: continue
            val heap = victim.timers ?: continue
            if (victim === worker) continue
            if (victim.inTask) pool.takeOffersOf(victim, tryOnly = true)
            if (heap.earliest == null) continue
            if (!clockRead) {
                now = System.nanoTime()
                clockRead = true
            }
            if (!heap.isDue(now)) continue
            val n = heap.tryPollDue(now, dueTimers, TIMER_BATCH)
            if (n > 0) {
                worker.counters.countTimersStolen(n)
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
        worker.counters.countTimersFired(n)
        // The batch is in deadline order: the first is the latest.
        val late = now - dueTimers[0]!!.deadline
        if (late >= LATE_TIMER_NANOS) reportLateTimers(dueTimers[0]!!, late, n, now)
        for (k in n - 1 downTo 0) {
            val t = dueTimers[k]!!
            dueTimers[k] = null
            if (k > 0) worker.deque.push(t)
            else {
                if (n > 1) pool.signalAfterPublish()
                return t
            }
        }
        return null
    }

    /**
     * A batch of [n] due timers taken [lateNanos] after the earliest one's deadline: one event,
     * at most one per [LATE_TIMER_NANOS] per worker (an overload would otherwise emit one per
     * batch and flood the recording), counting the late batches it stands for.
     */
    private fun reportLateTimers(first: Timer, lateNanos: Long, n: Int, now: Long) {
        if (!jfrStarted()) return
        val event = LateTimerEvent()
        if (!event.isEnabled) return
        if (lastLateEventAt != 0L && now - lastLateEventAt < LATE_TIMER_NANOS) {
            lateBatchesSkipped++
            return
        }
        lastLateEventAt = now
        event.pool = pool.name
        event.worker = worker.index
        event.timerClass = first.javaClass.simpleName
        event.lateness = lateNanos
        event.timers = n
        event.lateBatchesSkipped = lateBatchesSkipped
        lateBatchesSkipped = 0
        event.commit()
    }

    private companion object {
        /** Due timers taken from a heap at once. */
        const val TIMER_BATCH = 32

        /** A timer that fires this late (from its deadline to being taken) is reported as a [LateTimerEvent]. */
        const val LATE_TIMER_NANOS = 20_000_000L
    }
}
