package dev.stealing.internal.timer

import dev.stealing.internal.jvm.TestHooks

/**
 * The storage of a [TimerHeap]: a binary min-heap of timers by deadline, ties by insertion
 * order, in two parallel arrays. Not thread-safe: its one user, the [TimerHeap], calls it under
 * its lock. The [TimerHeap] sets a timer's [Timer.heap] before inserting it; this class keeps
 * [Timer.heapIndex] and [Timer.seq], and marks a timer that leaves as in no heap (`heap` null,
 * `heapIndex` -1).
 *
 * No timer is lost to an allocation that fails: the arrays are replaced only after both new
 * ones exist ([ensureRoom]), so an `OutOfMemoryError` while growing leaves the heap as it was and
 * reaches the caller before any timer moved; and giving memory back after a burst ([removeAt])
 * is skipped when its smaller arrays cannot be had, since the removal it follows has already
 * happened and its caller must still get the removed timer.
 */
internal class DeadlineHeap {
    private var queue = arrayOfNulls<Timer>(INITIAL_CAPACITY)

    /**
     * `queue[i].deadline` for every i < [size]: sifting compares deadlines in this array and loads
     * a timer object only to break a tie, so a deep heap costs one cache line per level instead
     * of one timer object per comparison.
     */
    private var deadlines = LongArray(INITIAL_CAPACITY)

    private var nextSeq = 0L

    /**
     * Tests only: runs before each array this heap allocates as it grows or shrinks (to throw an
     * `OutOfMemoryError` there). Read only where [TestHooks.ENABLED].
     */
    internal var beforeAllocation: Runnable? = null
        set(value) {
            TestHooks.requireEnabled()
            field = value
        }

    /** Timers in the heap. */
    var size = 0
        private set

    /** The length of the arrays. */
    fun capacity(): Int = queue.size

    /** The timer with the earliest deadline, or null. */
    fun head(): Timer? = if (size == 0) null else queue[0]

    /** Whether [timer] is the one at [index] (a timer's [Timer.heapIndex] may be stale). */
    fun holdsAt(index: Int, timer: Timer): Boolean = index in 0 until size && queue[index] === timer

    /**
     * Grows the arrays, if needed, so that [extra] more timers fit; an `OutOfMemoryError` leaves
     * them as they were. [insert] then allocates nothing for those timers.
     */
    fun ensureRoom(extra: Int) {
        val needed = size.toLong() + extra
        if (needed <= queue.size) return
        var capacity = queue.size.toLong()
        while (capacity < needed) capacity *= 2
        if (capacity > MAX_CAPACITY) {
            if (needed > MAX_CAPACITY) throw OutOfMemoryError("a worker's timer heap cannot hold $needed timers")
            capacity = MAX_CAPACITY.toLong()
        }
        resize(capacity.toInt())
    }

    /** Sifts [timer] in (growing the arrays first if they are full: see [ensureRoom]). */
    fun insert(timer: Timer) {
        ensureRoom(1)
        timer.seq = nextSeq++
        siftUp(size++, timer)
    }

    /** Removes the timer at [i] and marks it as in no heap. */
    fun removeAt(i: Int) {
        val removed = queue[i]!!
        removed.heap = null
        removed.heapIndex = -1
        val last = --size
        val moved = queue[last]!!
        queue[last] = null
        if (i != last) {
            siftDown(i, moved)
            if (queue[i] === moved) siftUp(i, moved)
        }
        // Give memory back after a burst: at a quarter full, halve (never below the initial size).
        if (queue.size > INITIAL_CAPACITY && size < queue.size / 4) {
            try {
                resize(queue.size / 2)
            } catch (e: OutOfMemoryError) {
                // Keep the larger arrays: the removal is done and its caller must get the timer.
            }
        }
    }

    /** Removes up to [max] timers due at [now] into [into], earliest first; returns how many. */
    fun takeDue(now: Long, into: Array<Timer?>, max: Int): Int {
        var n = 0
        while (n < max && size > 0) {
            if (deadlines[0] - now > 0) break
            val head = queue[0]!!
            removeAt(0)
            into[n++] = head
        }
        return n
    }

    /** Empties the heap, passing each timer (marked as in no heap), in array order, to [action]. */
    inline fun drain(action: (Timer) -> Unit) {
        val n = size
        for (i in 0 until n) {
            val t = timerAt(i)
            t.heap = null
            t.heapIndex = -1
            action(t)
        }
        clear(n)
    }

    /** For [drain]: the timer at index [i] < [size]. */
    fun timerAt(i: Int): Timer = queue[i]!!

    /** For [drain]: forgets the first [n] slots, which it has passed on. */
    fun clear(n: Int) {
        queue.fill(null, 0, n)
        size = 0
    }

    /** Both arrays first, then the fields: an Error in either allocation changes nothing. */
    private fun resize(capacity: Int) {
        if (TestHooks.ENABLED) beforeAllocation?.run()
        val q = queue.copyOf(capacity)
        if (TestHooks.ENABLED) beforeAllocation?.run()
        val d = deadlines.copyOf(capacity)
        queue = q
        deadlines = d
    }

    /** Whether [t], due at [d], comes before the timer at index [j]. */
    private fun before(d: Long, t: Timer, j: Int): Boolean {
        val diff = d - deadlines[j]
        return diff < 0 || (diff == 0L && t.seq < queue[j]!!.seq)
    }

    /** Whether the timer at index [a] comes before the one at index [b]. */
    private fun beforeAt(a: Int, b: Int): Boolean {
        val diff = deadlines[a] - deadlines[b]
        return diff < 0 || (diff == 0L && queue[a]!!.seq < queue[b]!!.seq)
    }

    private fun place(i: Int, t: Timer, d: Long) {
        queue[i] = t
        deadlines[i] = d
        t.heapIndex = i
    }

    private fun siftUp(start: Int, t: Timer) {
        val d = t.deadline
        var i = start
        while (i > 0) {
            val parent = (i - 1) ushr 1
            if (!before(d, t, parent)) break
            place(i, queue[parent]!!, deadlines[parent])
            i = parent
        }
        place(i, t, d)
    }

    private fun siftDown(start: Int, t: Timer) {
        val d = t.deadline
        var i = start
        val half = size ushr 1
        while (i < half) {
            var child = 2 * i + 1
            val right = child + 1
            if (right < size && beforeAt(right, child)) child = right
            if (before(d, t, child)) break
            place(i, queue[child]!!, deadlines[child])
            i = child
        }
        place(i, t, d)
    }

    companion object {
        const val INITIAL_CAPACITY = 16

        /** The largest array the JVM reliably allocates. */
        private const val MAX_CAPACITY = Int.MAX_VALUE - 8
    }
}
