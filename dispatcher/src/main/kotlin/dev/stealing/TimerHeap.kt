package dev.stealing

import java.util.concurrent.locks.ReentrantLock

/**
 * One core worker's pending timers ([Timer]): a binary min-heap by deadline (ties by insertion
 * order), in an array, under a lock.
 *
 * Who uses it: the owner worker adds the timers it creates and takes the due ones between
 * tasks; any thread may add (timers created outside the pool, keyed timers, the periodic
 * re-schedule of a task that ran elsewhere) and remove (a cancelled timer: `withTimeout` that
 * finished early, a cancelled `delay`, `ScheduledFuture.cancel`); other workers take due timers
 * with [tryPollDue], which never waits for the lock, when the owner is busy or blocked.
 *
 * Why a lock and not a lock-free structure: every operation is O(log n) on a few cache lines
 * and, in the common case (a worker's own `withTimeout`: add, then remove), uncontended, so the
 * lock costs two CAS-free-of-contention atomics. A cancelled timer is removed at once (its
 * index is kept in [Timer.heapIndex]), so the heap holds only live timers: 10 million
 * `withTimeout` calls that end early leave it as small as it was.
 *
 * [earliest] is the head, published with a volatile write after every change, so a parking
 * owner can compute its park timeout, and searchers and the starvation monitor can see a due
 * timer, without the lock. [close] (the owner's exit, or `shutdownNow`) refuses later adds, so
 * a timer is either drained by the closer or refused to its creator, never stranded.
 */
internal class TimerHeap {
    private val lock = ReentrantLock()
    private var queue = arrayOfNulls<Timer>(INITIAL_CAPACITY) // guarded by lock
    private var count = 0 // guarded by lock
    private var nextSeq = 0L // guarded by lock
    private var closed = false // guarded by lock

    /** The timer with the earliest deadline, or null; written under the lock after each change. */
    @Volatile var earliest: Timer? = null
        private set

    /** Pending timers (a racy read, for stats). */
    @Volatile var size: Int = 0
        private set

    /** The length of the heap's array (tests: memory given back after a burst). */
    fun capacity(): Int {
        lock.lock()
        try {
            return queue.size
        } finally {
            lock.unlock()
        }
    }

    /** Whether the earliest timer's deadline is at or before [now] (no lock). */
    fun isDue(now: Long): Boolean {
        val e = earliest ?: return false
        return e.deadline - now <= 0
    }

    /**
     * Adds [timer]: [ADDED], or [ADDED_EARLIEST] if it is now the earliest (a parked owner must
     * recompute its park timeout), or [CLOSED] if this heap no longer takes timers.
     */
    fun add(timer: Timer): Int {
        lock.lock()
        try {
            if (closed) return CLOSED
            timer.seq = nextSeq++
            if (count == queue.size) queue = queue.copyOf(count * 2)
            timer.heap = this
            siftUp(count++, timer)
            size = count
            return if (queue[0] === timer) {
                earliest = timer
                ADDED_EARLIEST
            } else {
                ADDED
            }
        } finally {
            lock.unlock()
        }
    }

    /** Removes [timer] if it is still in this heap; false if it was taken or never here. */
    fun remove(timer: Timer): Boolean {
        lock.lock()
        try {
            val i = timer.heapIndex
            if (timer.heap !== this || i < 0 || i >= count || queue[i] !== timer) return false
            removeAt(i)
            return true
        } finally {
            lock.unlock()
        }
    }

    /**
     * Owner: takes up to [max] timers due at [now] into [into] (earliest first); returns how
     * many.
     */
    fun pollDue(now: Long, into: Array<Timer?>, max: Int): Int {
        lock.lock()
        try {
            return takeDue(now, into, max)
        } finally {
            lock.unlock()
        }
    }

    /** [pollDue] for another worker: 0 at once if the lock is held. */
    fun tryPollDue(now: Long, into: Array<Timer?>, max: Int): Int {
        if (!lock.tryLock()) return 0
        try {
            return takeDue(now, into, max)
        } finally {
            lock.unlock()
        }
    }

    /** Every pending timer, for [action], removed; with [close], later adds are refused. */
    fun drain(close: Boolean, action: (Timer) -> Unit) {
        val taken: List<Timer>
        lock.lock()
        try {
            if (close) closed = true
            taken = ArrayList<Timer>(count).also { list -> for (i in 0 until count) list += queue[i]!! }
            for (t in taken) {
                t.heap = null
                t.heapIndex = -1
            }
            queue.fill(null, 0, count)
            count = 0
            size = 0
            earliest = null
        } finally {
            lock.unlock()
        }
        taken.forEach(action)
    }

    /** Removes every pending timer for which [predicate] holds and passes it to [action]. */
    fun removeIf(predicate: (Timer) -> Boolean, action: (Timer) -> Unit) {
        val taken = ArrayList<Timer>()
        lock.lock()
        try {
            var kept = 0
            for (i in 0 until count) {
                val t = queue[i]!!
                if (predicate(t)) {
                    t.heap = null
                    t.heapIndex = -1
                    taken += t
                } else {
                    queue[kept++] = t
                }
            }
            if (taken.isEmpty()) return
            queue.fill(null, kept, count)
            count = kept
            for (i in (count ushr 1) - 1 downTo 0) siftDown(i, queue[i]!!) // re-heapify
            for (i in 0 until count) queue[i]!!.heapIndex = i
            size = count
            earliest = if (count == 0) null else queue[0]
        } finally {
            lock.unlock()
        }
        taken.forEach(action)
    }

    private fun takeDue(now: Long, into: Array<Timer?>, max: Int): Int {
        var n = 0
        while (n < max && count > 0) {
            val head = queue[0]!!
            if (head.deadline - now > 0) break
            removeAt(0)
            into[n++] = head
        }
        return n
    }

    /** Under the lock: removes the timer at [i], then republishes [earliest] and [size]. */
    private fun removeAt(i: Int) {
        val removed = queue[i]!!
        removed.heap = null
        removed.heapIndex = -1
        val last = --count
        val moved = queue[last]!!
        queue[last] = null
        if (i != last) {
            siftDown(i, moved)
            if (queue[i] === moved) siftUp(i, moved)
        }
        // Give memory back after a burst: at a quarter full, halve (never below the initial size).
        if (queue.size > INITIAL_CAPACITY && count < queue.size / 4) queue = queue.copyOf(queue.size / 2)
        size = count
        earliest = if (count == 0) null else queue[0]
    }

    private fun siftUp(start: Int, t: Timer) {
        var i = start
        while (i > 0) {
            val parent = (i - 1) ushr 1
            val p = queue[parent]!!
            if (!t.before(p)) break
            queue[i] = p
            p.heapIndex = i
            i = parent
        }
        queue[i] = t
        t.heapIndex = i
    }

    private fun siftDown(start: Int, t: Timer) {
        var i = start
        val half = count ushr 1
        while (i < half) {
            var child = 2 * i + 1
            var c = queue[child]!!
            val right = child + 1
            if (right < count && queue[right]!!.before(c)) {
                child = right
                c = queue[child]!!
            }
            if (!c.before(t)) break
            queue[i] = c
            c.heapIndex = i
            i = child
        }
        queue[i] = t
        t.heapIndex = i
    }

    companion object {
        const val CLOSED = 0
        const val ADDED = 1
        const val ADDED_EARLIEST = 2
        const val INITIAL_CAPACITY = 16
    }
}
