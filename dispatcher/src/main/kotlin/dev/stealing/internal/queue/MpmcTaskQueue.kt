package dev.stealing.internal.queue

import dev.stealing.internal.jvm.TestHooks
import dev.stealing.internal.jvm.fieldHandle
import java.lang.invoke.MethodHandles
import java.lang.invoke.VarHandle

/**
 * A multi-producer, multi-consumer, FIFO, lock-free, unbounded queue of tasks that can be
 * closed. It is the pool's global queue (work submitted from threads that are not workers of
 * the pool, and `yield()`ed coroutines) and the storage of every fair queue.
 *
 * Design: a chain of [Segment]s, each a bounded ring in the style of Dmitry Vyukov's MPMC queue
 * (one sequence number per slot; producers and consumers claim positions by CAS). While the
 * queue keeps up, one segment is reused forever, so a steady stream of tasks allocates nothing.
 * A producer that finds its segment full closes it (a CLOSED bit in its enqueue position) and
 * links a fresh segment of twice the size (up to [MAX_SEGMENT_CAPACITY]); consumers move past a
 * segment once it is closed and drained. The newest segment is the one that stays, so repeated
 * bursts of similar size stop allocating once a segment holds a whole burst.
 *
 * Consumers may claim a run of ready slots with one CAS ([pollBatch]), which is how workers
 * drain a flood without contending on every task.
 *
 * Closing the queue ([close]) closes every segment and links the [TOMBSTONE] after the last one,
 * so from then on [offer] fails. This makes shutdown linearizable at no cost to the hot path:
 * an offer either succeeded before close (and its task is drained by the workers, see
 * [isDrained]) or fails and is rejected by the caller.
 *
 * A producer that has claimed a slot but not yet written it makes [poll] return null ("empty"):
 * that producer will signal the pool after its write (see `docs/parking.md`), so reading the
 * queue as empty here never loses a task.
 *
 * **A claimed slot always ends filled or skipped.** If anything is thrown between a producer's
 * claim and its publication (a `StackOverflowError` from a thread at the end of its stack, which
 * the publication's `VarHandle` call can hit in interpreted code), the producer marks the slot
 * [Segment.SKIPPED] with plain stores only (no call that could overflow again) and rethrows: its
 * caller gets the exception and the task was not accepted. A consumer that finds a slot claimed
 * but unpublished and marked skipped claims that position itself and frees the slot empty, never
 * reading the task. Tasks behind such a slot are therefore not held up for ever: a worker that
 * reads the queue as "a producer is writing" keeps looking (the claimed slot counts in [size])
 * until the marker is visible.
 */
internal class MpmcTaskQueue(
    private val segmentCapacity: Int = SEGMENT_CAPACITY,
    /** Where the first segment's positions start (tests: near the 32-bit wrap of `seqs`). */
    firstPosition: Long = 0,
) {
    /**
     * Tests only: runs between a producer's claim of a slot and its publication (to throw
     * there). Read only where [TestHooks.ENABLED], so elsewhere [offer] never loads it. Plain:
     * set before the producers start.
     */
    internal var afterClaim: Runnable? = null
        set(value) {
            TestHooks.requireEnabled()
            field = value
        }

    init {
        require(segmentCapacity >= 2 && segmentCapacity and (segmentCapacity - 1) == 0) {
            "segmentCapacity must be a power of two >= 2, was $segmentCapacity"
        }
        require(firstPosition >= 0 && firstPosition % segmentCapacity == 0L) {
            "firstPosition must be a non-negative multiple of segmentCapacity, was $firstPosition"
        }
    }

    @Volatile private var head: Segment = Segment(segmentCapacity, firstPosition)
    @Volatile private var tail: Segment = head

    /** Any thread. Appends [task]; false only after [close]. */
    fun offer(task: Runnable): Boolean {
        while (true) {
            val seg = tail
            if (seg.offer(task, if (TestHooks.ENABLED) afterClaim else null)) return true
            // seg is closed (full, or the queue is closing): move on to the next segment.
            var next = seg.next
            if (next == null) {
                val fresh = Segment(minOf(seg.capacity * 2, MAX_SEGMENT_CAPACITY))
                next = if (seg.casNext(null, fresh)) fresh else seg.next!!
            }
            if (next === TOMBSTONE) return false
            TAIL.compareAndSet(this, seg, next) // helping; failure means someone else advanced it
        }
    }

    /** Any thread. Takes the oldest task, or null if none is ready. */
    fun poll(): Runnable? {
        while (true) {
            val seg = head
            val r = seg.poll()
            if (r !== EXHAUSTED) return r as Runnable?
            val next = seg.next ?: return null // the closer is linking the next one: read as empty
            if (next === TOMBSTONE) return null
            HEAD.compareAndSet(this, seg, next) // helping; failure means someone else advanced it
        }
    }

    /**
     * Any thread. Takes up to `out.size` of the oldest tasks, in order, into [out]; returns how
     * many (0 if none is ready). One CAS claims the whole run.
     */
    fun pollBatch(out: Array<Runnable?>): Int {
        while (true) {
            val seg = head
            val n = seg.pollBatch(out)
            if (n >= 0) return n
            val next = seg.next ?: return 0 // the closer is linking the next one: read as empty
            if (next === TOMBSTONE) return 0
            HEAD.compareAndSet(this, seg, next) // helping; failure means someone else advanced it
        }
    }

    /** Any thread. Closes the queue: every later [offer] fails. Idempotent. */
    fun close() {
        var seg = tail
        while (true) {
            seg.closeForOffers()
            if (seg.casNext(null, TOMBSTONE)) return
            val next = seg.next!!
            if (next === TOMBSTONE) return
            seg = next
        }
    }

    /**
     * True when the queue is closed and every task that was ever offered has been polled
     * (claimed-but-unwritten slots count as not drained).
     */
    fun isDrained(): Boolean {
        var seg = head
        while (true) {
            if (!seg.isClosedAndEmpty()) return false
            seg = seg.next ?: return false
            if (seg === TOMBSTONE) return true
        }
    }

    /** Any thread. A racy estimate of the number of queued tasks. */
    fun size(): Int {
        var n = 0L
        var seg: Segment? = head
        while (seg != null && seg !== TOMBSTONE) {
            n += seg.size()
            seg = seg.next
        }
        return n.coerceAtMost(Int.MAX_VALUE.toLong()).toInt()
    }

    /** A bounded Vyukov ring; see the class comment of [MpmcTaskQueue]. */
    private class Segment(val capacity: Int, start: Long = 0) {
        private val mask = capacity - 1
        private val items = arrayOfNulls<Runnable>(capacity)
        /**
         * seqs[i] == pos: slot free for the producer of pos; == pos + 1: filled for the consumer
         * of pos. Stored as the low 32 bits of the position (8 bytes less per slot than a Long,
         * which the drain of a flood reads and writes once per task): while `pos` is the
         * current enqueue (dequeue) position, the slot for `pos` holds a value within
         * `capacity + 1` of it, so the Int difference ([seqDiff]) is the true one. A `pos` that
         * has gone stale can be misread, but every decision taken on a stale `pos` ends in a
         * CAS of the 64-bit position that fails, or is re-checked against it first ([poll]).
         */
        private val seqs = IntArray(capacity) { (start + it).toInt() }
        /*
         * enqPos and deqPos are read only with getVolatile and changed only by CAS: they are the
         * claim points. A CAS on enqPos claims a slot for one producer (and, being a
         * synchronization action, pairs with a sleeper's CAS on ctl in the parking proof: the
         * sleeper's re-scan reads enqPos with getVolatile in size()). A CAS on deqPos claims
         * one slot (poll) or a run of slots (pollBatch) for one consumer. The slot contents
         * are published separately by the per-slot sequence numbers (setRelease/getAcquire).
         */
        @Suppress("unused") private var enqPos: Long = start // through ENQ; may carry CLOSED
        @Suppress("unused") private var deqPos: Long = start // through DEQ
        @Volatile var next: Segment? = null

        fun casNext(expected: Segment?, value: Segment): Boolean = NEXT.compareAndSet(this, expected, value)

        fun offer(task: Runnable, afterClaim: Runnable?): Boolean {
            var pos = ENQ.getVolatile(this) as Long
            while (true) {
                if (pos and CLOSED != 0L) return false
                val i = (pos and mask.toLong()).toInt()
                val dif = seqDiff(SEQ.getAcquire(seqs, i) as Int, pos) // pairs with setRelease in poll()
                if (dif == 0) {
                    if (ENQ.compareAndSet(this, pos, pos + 1)) { // claims slot i for this producer
                        try {
                            afterClaim?.run()
                            items[i] = task // plain: published by the release store below
                            SEQ.setRelease(seqs, i, (pos + 1).toInt()) // pairs with getAcquire in poll()
                        } catch (t: Throwable) {
                            // Plain array accesses only, no call: the stack may be at its end.
                            // Unpublished exactly while the sequence is still `pos`: only this
                            // producer moves it off `pos`, and a consumer may free and reuse the
                            // slot once it is published. Read by skipIfMarked().
                            if (seqs[i] == pos.toInt()) items[i] = SKIPPED
                            throw t
                        }
                        return true
                    }
                } else if (dif < 0) {
                    // The consumer of pos - capacity has not freed this slot: the ring is full.
                    ENQ.compareAndSet(this, pos, pos or CLOSED)
                }
                pos = ENQ.getVolatile(this) as Long
            }
        }

        /** Returns a task, null when nothing is ready, or [EXHAUSTED] when closed and drained. */
        fun poll(): Any? {
            var pos = DEQ.getVolatile(this) as Long
            while (true) {
                val i = (pos and mask.toLong()).toInt()
                val dif = seqDiff(SEQ.getAcquire(seqs, i) as Int, pos + 1) // pairs with setRelease in offer()
                if (dif == 0) {
                    if (DEQ.compareAndSet(this, pos, pos + 1)) { // claims slot i for this consumer
                        val task = items[i] // plain: ordered after the getAcquire of seqs[i] above
                        items[i] = null
                        SEQ.setRelease(seqs, i, (pos + mask + 1).toInt()) // frees the slot; pairs with offer()
                        return task
                    }
                } else if (dif < 0) {
                    // Slot not filled: empty, or a producer claimed it and is still writing. Only
                    // if pos is still current: a stale one can make the 32-bit difference negative,
                    // and a null returned then would be a spurious "empty" (no task would be lost,
                    // but the parking proof reads null as empty or a producer mid-write).
                    val current = DEQ.getVolatile(this) as Long
                    if (current != pos) {
                        pos = current
                        continue
                    }
                    val e = ENQ.getVolatile(this) as Long
                    if ((e and CLOSED.inv()) == pos) return if (e and CLOSED != 0L) EXHAUSTED else null
                    // Claimed by a producer: still writing (null), or it failed and left the slot
                    // skipped, which a consumer passes over (claims and frees it empty).
                    if (!skipIfMarked(i, pos)) {
                        // Not marked: the producer is still writing, unless another consumer passed
                        // the skipped slot meanwhile and took its marker with it. Then pos is stale,
                        // and a null now would be a spurious "empty" with tasks behind the slot
                        // (found by MpmcTaskQueueLincheckSpec): look again from the new position.
                        val now = DEQ.getVolatile(this) as Long
                        if (now == pos) return null
                        pos = now
                        continue
                    }
                    pos = DEQ.getVolatile(this) as Long
                    continue
                }
                pos = DEQ.getVolatile(this) as Long
            }
        }

        /**
         * Claims the longest run of ready slots from the consumer position, up to `out.size`,
         * with one CAS. Returns the count, 0 when nothing is ready, -1 when closed and drained.
         */
        fun pollBatch(out: Array<Runnable?>): Int {
            var pos = DEQ.getVolatile(this) as Long
            while (true) {
                var n = 0
                while (n < out.size) {
                    val i = ((pos + n) and mask.toLong()).toInt()
                    // A slot is ready for the consumer of position p when its seq is p + 1.
                    if (SEQ.getAcquire(seqs, i) as Int != (pos + n + 1).toInt()) break // pairs with offer()
                    n++
                }
                if (n == 0) {
                    val r = poll() // not ready, exhausted, or our position was stale: let poll() decide
                    if (r === EXHAUSTED) return -1
                    if (r == null) return 0
                    out[0] = r as Runnable
                    return 1
                }
                if (DEQ.compareAndSet(this, pos, pos + n)) { // claims the whole run for this consumer
                    for (k in 0 until n) { // each slot's item was ordered by its getAcquire above
                        val i = ((pos + k) and mask.toLong()).toInt()
                        out[k] = items[i]
                        items[i] = null
                        SEQ.setRelease(seqs, i, (pos + k + mask + 1).toInt()) // frees the slot; pairs with offer()
                    }
                    return n
                }
                pos = DEQ.getVolatile(this) as Long
            }
        }

        /**
         * Slot [i] of the current dequeue position [pos] is claimed and unpublished: if its
         * producer failed and left it [SKIPPED], claims the position (the CAS on `deqPos`, so
         * one consumer does), empties the slot and frees it for the next lap as a consume does,
         * and returns true; the caller then looks at the next position. The slot is never
         * published, so no consumer reads the task the producer may have written before it
         * failed. Its sequence number stays `pos` until the free: producers of the next lap wait
         * for `pos + capacity`, consumers of this one for `pos + 1`.
         *
         * The marker is a plain store of the failed producer's, with no release to pair with:
         * this read sees it once it is visible (until then the slot reads as a producer still
         * writing), and cannot see one of an earlier lap, whose consumer emptied the slot
         * before freeing it for this lap's producer (release, acquired by that producer before
         * its claim, which this consumer's read of the enqueue position follows).
         */
        private fun skipIfMarked(i: Int, pos: Long): Boolean {
            if (ITEM.getAcquire(items, i) !== SKIPPED) return false
            if (!DEQ.compareAndSet(this, pos, pos + 1)) return true // another consumer passed it, or took pos
            items[i] = null
            SEQ.setRelease(seqs, i, (pos + mask + 1).toInt()) // frees the slot; pairs with offer()
            return true
        }

        fun closeForOffers() {
            while (true) {
                val e = ENQ.getVolatile(this) as Long
                if (e and CLOSED != 0L || ENQ.compareAndSet(this, e, e or CLOSED)) return
            }
        }

        fun isClosedAndEmpty(): Boolean {
            val e = ENQ.getVolatile(this) as Long
            return e and CLOSED != 0L && (e and CLOSED.inv()) == DEQ.getVolatile(this) as Long
        }

        fun size(): Long {
            val d = DEQ.getVolatile(this) as Long
            val e = (ENQ.getVolatile(this) as Long) and CLOSED.inv()
            return (e - d).coerceAtLeast(0)
        }

        companion object {
            val ENQ: VarHandle = fieldHandle(Segment::class.java, "enqPos", Long::class.javaPrimitiveType!!)
            val DEQ: VarHandle = fieldHandle(Segment::class.java, "deqPos", Long::class.javaPrimitiveType!!)
            val NEXT: VarHandle = fieldHandle(Segment::class.java, "next", Segment::class.java)
            val SEQ: VarHandle = MethodHandles.arrayElementVarHandle(IntArray::class.java)
            val ITEM: VarHandle = MethodHandles.arrayElementVarHandle(Array<Runnable?>::class.java)

            /**
             * Marks a slot whose producer failed between its claim and its publication; never
             * returned by a consumer. A field of this class, so that the producer's failure path
             * reads it with one `getstatic` and calls nothing.
             */
            @JvmField val SKIPPED: Runnable = Runnable { }

            /**
             * `seq - pos` in 32 bits: exact while `pos` is current (see `seqs`), because the true
             * difference is then at most `capacity + 1` <= MAX_SEGMENT_CAPACITY + 1, far below 2^31.
             */
            @Suppress("NOTHING_TO_INLINE")
            inline fun seqDiff(seq: Int, pos: Long): Int = seq - pos.toInt()
        }
    }

    private companion object {
        const val SEGMENT_CAPACITY = 1024
        const val MAX_SEGMENT_CAPACITY = 1 shl 16
        const val CLOSED = 1L shl 62
        val EXHAUSTED = Any()

        /** Permanently closed and empty; linked after the last segment by [close]. */
        val TOMBSTONE = Segment(2).also { it.closeForOffers() }

        val HEAD: VarHandle = fieldHandle(MpmcTaskQueue::class.java, "head", Segment::class.java)
        val TAIL: VarHandle = fieldHandle(MpmcTaskQueue::class.java, "tail", Segment::class.java)
    }
}
