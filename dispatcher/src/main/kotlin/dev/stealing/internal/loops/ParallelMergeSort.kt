package dev.stealing.internal.loops

import dev.stealing.internal.join.JoinableTask
import dev.stealing.internal.jvm.fieldHandle
import dev.stealing.internal.worker.Worker
import dev.stealing.internal.worker.WorkerHost
import java.lang.invoke.VarHandle
import java.util.concurrent.Callable

/**
 * A parallel merge sort of one array on a pool's workers: `parallelSort` and `parallelSortWith`.
 *
 * A range longer than [leafSize] is cut in two halves, each sorted (the right one forked) into
 * the other of the array and the buffer, then merged back into the range's own place; the root
 * range's place is the array. So the halves' places alternate level by level, and a leaf that
 * must end in the buffer first copies its range there, then sorts it in place: the copy is the
 * only extra pass, and it runs inside the leaves, on every worker. A merge longer than
 * [MERGE_LEAF] is itself split at the middle of its longer run (the other run cut by binary
 * search), so the last merges, the longest, also run on every worker. Leaves are sorted with
 * `java.util.Arrays.sort`. The merge takes from the left run on ties, and a cut of the right
 * run's middle cuts the left run after the elements equal to it ([upperBound]), so a stable
 * leaf sort gives a stable sort ([ObjectMergeSort]).
 *
 * Leaves: as many as workers when that is a power of two, else the power of two at least twice
 * as many, so the leaves share out evenly (never shorter than [MIN_LEAF]). Every level of merges
 * is a pass over the whole array, and a pass costs more than the balance that more, smaller
 * leaves would buy, above all where `Arrays.sort` uses SIMD instructions (JDK 22 and later on
 * x86 with AVX-512 or AVX2) and the merges do not: on two workers this shape (two leaves, one
 * merge pass) brought a 10M-int sort on Temurin 25 from about `Arrays.parallelSort`'s time to
 * about 0.8 x of it, where the earlier one (four quarters, two passes) stayed (docs/loops.md,
 * "The sort"). A pool of one worker, or a short array, sorts in one `Arrays.sort` call with no
 * buffer.
 *
 * **Stopping** ([cancel], when the caller is cancelled): leaves not yet sorted are skipped (a
 * leaf that belongs in the buffer is still copied there), but every merge still runs, so the
 * array keeps its elements (a merge of any two sequences is a permutation of them), in an
 * unspecified order. **A failure** (a comparator that throws, in a leaf, a merge or a cut) is
 * kept as the first one, later ones suppressed into it ([fail]); it stops the sort as a cancel
 * does (a leaf already in `Arrays.sort` runs to its end), and the merges after it only move
 * their runs into place ([moveRun]), calling no comparator; [sortAll] then throws it. A leaf whose `Arrays.sort` threw may have lost elements
 * (as `Arrays.sort` itself may), so after a failure the array's content is unspecified.
 *
 * Forks are [JoinableTask]s on the worker's deque, joined newest first as in [RangeLoop].
 *
 * The element type lives only in the kernels ([sortLeaf], [copyToBuffer], [allocateBuffer],
 * [merge], [lowerBound], [moveRun]), written out once per array type in [IntMergeSort],
 * [LongMergeSort], [DoubleMergeSort] (its own merge: the order of `Double.compare`) and
 * [ObjectMergeSort] (a comparator): much the same text, because Kotlin has no generics over
 * primitive arrays, and a kernel shared through boxed values or an accessor interface would
 * cost a call or an allocation per element.
 */
internal abstract class ParallelMergeSort(private val size: Int) : CancellableLoop {
    @Volatile private var stopped = false

    /** The first failure of a leaf, merge or cut; later ones are added to it as suppressed. Through [FAILURE]. */
    @Volatile private var failure: Throwable? = null

    /** Leaves up to this size are sorted with `Arrays.sort`; set by [sortAll] before the first fork. */
    private var leafSize = size

    /** The caller was cancelled: sort no more leaves (merges still run, so no element is lost). */
    override fun cancel() {
        stopped = true
    }

    /** Sorts `[lo, hi)` of the array (or of the buffer, [inBuffer]) in place, ascending. */
    protected abstract fun sortLeaf(inBuffer: Boolean, lo: Int, hi: Int)

    /** Copies `[lo, hi)` of the array to the same place in the buffer. */
    protected abstract fun copyToBuffer(lo: Int, hi: Int)

    /** Allocates the buffer, as long as the array. */
    protected abstract fun allocateBuffer()

    /** Merges `[aLo, aHi)` and `[bLo, bHi)` of the array (or the buffer, [fromBuffer]) into the other one from [to]. */
    protected abstract fun merge(fromBuffer: Boolean, aLo: Int, aHi: Int, bLo: Int, bHi: Int, to: Int)

    /** In the array (or the buffer), the first index of `[lo, hi)` whose element is not less than the element at [keyAt]. */
    protected abstract fun lowerBound(fromBuffer: Boolean, lo: Int, hi: Int, keyAt: Int): Int

    /**
     * In the array (or the buffer), the first index of `[lo, hi)` whose element is greater than
     * the element at [keyAt]. For a primitive type equal elements cannot be told apart, so the
     * default, [lowerBound], does as well; a stable sort of objects overrides it.
     */
    protected open fun upperBound(fromBuffer: Boolean, lo: Int, hi: Int, keyAt: Int): Int = lowerBound(fromBuffer, lo, hi, keyAt)

    /** Copies `[lo, hi)` of the array (or the buffer) unchanged into the other one from [to]: a merge after a failure. */
    protected abstract fun moveRun(fromBuffer: Boolean, lo: Int, hi: Int, to: Int)

    /** Sorts the whole array from the calling thread, on [pool]'s workers if this thread is one of them (null: here only). */
    fun sortAll(pool: WorkerHost?) {
        val w = Thread.currentThread() as? Worker
        if (pool != null) leafSize = maxOf(MIN_LEAF, ceilDiv(size, leafCount(pool.parallelism)))
        if (pool == null || pool.parallelism == 1 || size <= leafSize || w == null || w.pool !== pool) {
            w?.counters?.countLoopPiece()
            if (!stopped) sortLeaf(false, 0, size)
            return
        }
        allocateBuffer()
        sortRange(0, size, intoBuffer = false)
        failure?.let { throw it }
    }

    /** Records [e]: the first failure, or suppressed into it; stops the sort. */
    private fun fail(e: Throwable) {
        if (!FAILURE.compareAndSet(this, null, e)) {
            val first = failure!!
            if (first !== e) first.addSuppressed(e) // Throwable's own lock guards its list
        }
        stopped = true
    }

    /**
     * Sorts `[lo, hi)` into the array, or into the buffer ([intoBuffer]): its halves are sorted
     * into the other one (the right half forked), then merged back into this one.
     */
    private fun sortRange(lo: Int, hi: Int, intoBuffer: Boolean) {
        val n = hi - lo
        if (n <= leafSize) {
            (Thread.currentThread() as? Worker)?.counters?.countLoopPiece()
            if (intoBuffer) copyToBuffer(lo, hi) // even when stopped: the merges above read the buffer
            if (!stopped) {
                try {
                    sortLeaf(intoBuffer, lo, hi)
                } catch (e: Throwable) {
                    fail(e)
                }
            }
            return
        }
        val mid = lo + (n ushr 1)
        forkAndRun({ sortRange(mid, hi, !intoBuffer) }, here = { sortRange(lo, mid, !intoBuffer) })
        mergeRange(!intoBuffer, lo, mid, mid, hi, lo)
    }

    /** Merges two sorted runs of the array (or the buffer) into the other one from [to], splitting a long merge. */
    private fun mergeRange(fromBuffer: Boolean, aLo: Int, aHi: Int, bLo: Int, bHi: Int, to: Int) {
        val total = (aHi - aLo) + (bHi - bLo)
        if (failure == null && total <= MERGE_LEAF) {
            (Thread.currentThread() as? Worker)?.counters?.countLoopPiece()
            try {
                merge(fromBuffer, aLo, aHi, bLo, bHi, to)
                return
            } catch (e: Throwable) {
                fail(e)
            }
        }
        if (failure != null) { // no comparator runs after a failure: the runs only move into place
            moveRun(fromBuffer, aLo, aHi, to)
            moveRun(fromBuffer, bLo, bHi, to + (aHi - aLo))
            return
        }
        // Cut the longer run in the middle and the other where that element would go: before
        // the elements equal to it if it came from the left run, after them if from the right.
        val am: Int
        val bm: Int
        try {
            if (aHi - aLo >= bHi - bLo) {
                am = aLo + ((aHi - aLo) ushr 1)
                bm = lowerBound(fromBuffer, bLo, bHi, am)
            } else {
                bm = bLo + ((bHi - bLo) ushr 1)
                am = upperBound(fromBuffer, aLo, aHi, bm)
            }
        } catch (e: Throwable) {
            fail(e)
            moveRun(fromBuffer, aLo, aHi, to)
            moveRun(fromBuffer, bLo, bHi, to + (aHi - aLo))
            return
        }
        val rightTo = to + (am - aLo) + (bm - bLo)
        forkAndRun({ mergeRange(fromBuffer, am, aHi, bm, bHi, rightTo) }, here = { mergeRange(fromBuffer, aLo, am, bLo, bm, to) })
    }

    /**
     * Forks [forked] onto this worker's deque (or runs it here if the pool is stopping), runs
     * [here], then joins it. If [here] fails (only an `Error` can, such as running out of
     * memory), the sort stops and the forked half is still joined before the failure goes on,
     * as [RangeLoop] joins its halves: no part of the sort runs on after its call has returned.
     */
    private fun forkAndRun(forked: () -> Unit, here: () -> Unit) {
        val w = Thread.currentThread() as Worker
        val task = JoinableTask(Callable(forked))
        if (!w.pushFork(task)) {
            forked()
            here()
            return
        }
        w.counters.countLoopSplit()
        try {
            here()
        } catch (e: Throwable) {
            stopped = true // a forked half not started yet skips its leaves
            try {
                task.joinResult()
            } catch (f: Throwable) {
                if (f !== e) e.addSuppressed(f)
            }
            throw e
        }
        task.joinResult() // an error in the forked half (out of memory in the buffer's pass) is the caller's
    }

    internal companion object {
        /** Leaves for [parallelism] workers: that many if it is a power of two, else the power of two at least twice as many. */
        fun leafCount(parallelism: Int): Int {
            val power = Integer.highestOneBit(parallelism)
            return if (power == parallelism) parallelism else power shl 2
        }

        private fun ceilDiv(x: Int, y: Int): Int = (x - 1) / y + 1

        private val FAILURE: VarHandle = fieldHandle(ParallelMergeSort::class.java, "failure", Throwable::class.java)

        /** No leaf is cut smaller than this: below it a fork costs more than it saves. */
        const val MIN_LEAF = 1 shl 13

        /** Merges up to this many elements run in one piece. */
        const val MERGE_LEAF = 1 shl 16
    }
}

/** [ParallelMergeSort] of an `IntArray`. */
internal class IntMergeSort(private val a: IntArray) : ParallelMergeSort(a.size) {
    private var buffer: IntArray = a

    override fun allocateBuffer() {
        buffer = IntArray(a.size)
    }

    override fun sortLeaf(inBuffer: Boolean, lo: Int, hi: Int) = java.util.Arrays.sort(if (inBuffer) buffer else a, lo, hi)

    override fun copyToBuffer(lo: Int, hi: Int) = System.arraycopy(a, lo, buffer, lo, hi - lo)

    override fun moveRun(fromBuffer: Boolean, lo: Int, hi: Int, to: Int) =
        if (fromBuffer) System.arraycopy(buffer, lo, a, to, hi - lo) else System.arraycopy(a, lo, buffer, to, hi - lo)

    override fun lowerBound(fromBuffer: Boolean, lo: Int, hi: Int, keyAt: Int): Int {
        val src = if (fromBuffer) buffer else a
        val key = src[keyAt]
        var l = lo
        var h = hi
        while (l < h) {
            val m = (l + h) ushr 1
            if (src[m] < key) l = m + 1 else h = m
        }
        return l
    }

    override fun merge(fromBuffer: Boolean, aLo: Int, aHi: Int, bLo: Int, bHi: Int, to: Int) {
        val src = if (fromBuffer) buffer else a
        val dst = if (fromBuffer) a else buffer
        var i = aLo
        var j = bLo
        var k = to
        while (i < aHi && j < bHi) {
            val x = src[i]
            val y = src[j]
            if (y < x) { dst[k++] = y; j++ } else { dst[k++] = x; i++ }
        }
        if (i < aHi) System.arraycopy(src, i, dst, k, aHi - i)
        if (j < bHi) System.arraycopy(src, j, dst, k, bHi - j)
    }
}

/** [ParallelMergeSort] of a `LongArray`. */
internal class LongMergeSort(private val a: LongArray) : ParallelMergeSort(a.size) {
    private var buffer: LongArray = a

    override fun allocateBuffer() {
        buffer = LongArray(a.size)
    }

    override fun sortLeaf(inBuffer: Boolean, lo: Int, hi: Int) = java.util.Arrays.sort(if (inBuffer) buffer else a, lo, hi)

    override fun copyToBuffer(lo: Int, hi: Int) = System.arraycopy(a, lo, buffer, lo, hi - lo)

    override fun moveRun(fromBuffer: Boolean, lo: Int, hi: Int, to: Int) =
        if (fromBuffer) System.arraycopy(buffer, lo, a, to, hi - lo) else System.arraycopy(a, lo, buffer, to, hi - lo)

    override fun lowerBound(fromBuffer: Boolean, lo: Int, hi: Int, keyAt: Int): Int {
        val src = if (fromBuffer) buffer else a
        val key = src[keyAt]
        var l = lo
        var h = hi
        while (l < h) {
            val m = (l + h) ushr 1
            if (src[m] < key) l = m + 1 else h = m
        }
        return l
    }

    override fun merge(fromBuffer: Boolean, aLo: Int, aHi: Int, bLo: Int, bHi: Int, to: Int) {
        val src = if (fromBuffer) buffer else a
        val dst = if (fromBuffer) a else buffer
        var i = aLo
        var j = bLo
        var k = to
        while (i < aHi && j < bHi) {
            val x = src[i]
            val y = src[j]
            if (y < x) { dst[k++] = y; j++ } else { dst[k++] = x; i++ }
        }
        if (i < aHi) System.arraycopy(src, i, dst, k, aHi - i)
        if (j < bHi) System.arraycopy(src, j, dst, k, bHi - j)
    }
}
