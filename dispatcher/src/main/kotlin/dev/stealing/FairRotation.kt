package dev.stealing

import java.util.concurrent.atomic.AtomicInteger
import java.util.concurrent.locks.ReentrantLock
import kotlin.concurrent.withLock

/**
 * The pool's active fair queues and the weighted round-robin by which workers serve them
 * ([FairQueueDispatcher]). A queue joins when it is created and leaves once it is closed and
 * drained.
 *
 * Reads are lock-free: [poll] takes one ticket from a shared counter, maps it onto the
 * cumulative weights of an immutable [Schedule] (a queue of weight w owns w consecutive
 * tickets of every round), and takes one task from that queue, or from the next one that has
 * work. So while several queues have work, each gets tickets in proportion to its weight, one
 * task per ticket, whatever their backlogs. Membership changes (rare) copy the schedule under
 * a lock.
 *
 * With no fair queue, [poll] and [hasWork] are one volatile read of an empty schedule: the
 * rest of the pool does not pay for fairness.
 */
internal class FairRotation {
    /** An immutable rotation: the queues and the cumulative weights `ends[i]` = w0 + ... + wi. */
    private class Schedule(@JvmField val queues: Array<FairQueueDispatcher>) {
        @JvmField val ends = IntArray(queues.size).also { ends ->
            var sum = 0
            for (i in queues.indices) { sum += queues[i].weight; ends[i] = sum }
        }
        @JvmField val total = ends.lastOrNull() ?: 0
    }

    @Volatile private var schedule = Schedule(emptyArray())
    private val tickets = AtomicInteger()
    private val lock = ReentrantLock()

    /** Number of queues in the rotation. */
    val size: Int get() = schedule.queues.size

    /** The queues in the rotation (for statistics and shutdown). */
    fun queues(): List<FairQueueDispatcher> = schedule.queues.asList()

    /**
     * Adds [queue], unless the pool is shut down ([isShutdown], read under the same lock as
     * [closeAll] runs under): then the queue is closed at once and stays out.
     */
    fun add(queue: FairQueueDispatcher, isShutdown: () -> Boolean) {
        lock.withLock {
            if (isShutdown()) queue.closeIntake() else schedule = Schedule(schedule.queues + queue)
        }
    }

    /** Removes [queue] if present; idempotent. */
    fun remove(queue: FairQueueDispatcher) {
        lock.withLock {
            val current = schedule.queues
            if (queue in current) schedule = Schedule(current.filter { it !== queue }.toTypedArray())
        }
    }

    /** Any thread (workers): the next task by weighted round-robin, or null if no queue has one ready. */
    fun poll(): Runnable? {
        val s = schedule // volatile: pairs with the write in add()/remove()
        val n = s.queues.size
        if (n == 0) return null
        val ticket = Math.floorMod(tickets.getAndIncrement(), s.total)
        var i = s.ends.binarySearch(ticket).let { if (it >= 0) it + 1 else -it - 1 }
        repeat(n) {
            if (i == n) i = 0
            val q = s.queues[i]
            val task = q.pollForWorker()
            if (task != null) return task
            i++
        }
        return null
    }

    /** Whether any queue in the rotation holds a task (or a claimed slot): for re-scans. */
    fun hasWork(): Boolean {
        for (q in schedule.queues) if (q.queuedCount() > 0) return true
        return false
    }

    /** Closes every queue's intake (pool shutdown, after the run state moved on); queued work still runs. */
    fun closeAll() {
        lock.withLock { for (q in schedule.queues) q.closeIntake() }
    }

    /** Pool stop: every queued task of every queue, for handing back. */
    fun drainAll(into: MutableList<Runnable>) {
        for (q in schedule.queues) q.drainInto(into)
    }
}
