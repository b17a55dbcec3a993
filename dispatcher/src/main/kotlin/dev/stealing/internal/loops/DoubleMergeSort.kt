package dev.stealing.internal.loops

/**
 * [ParallelMergeSort] of a `DoubleArray`, in the order of `Arrays.sort(double[])` and
 * `Double.compare`: -0.0 before 0.0, and NaN after everything (positive infinity included).
 * The leaves are sorted with `Arrays.sort`, which gives that order; the merge and the cuts keep
 * it:
 * - a sorted run holds its NaNs at its end, so [merge] merges the runs' parts before their first
 *   NaN and appends the NaNs after them;
 * - within those parts `<` is the order except that it sees -0.0 and 0.0 as equal, so the merge
 *   compares with `<` alone (one comparison per element, as the `long` merge) and then puts the
 *   zeros it wrote right ([fixZeros]): they are contiguous in its output, and it writes the
 *   right number of -0.0 first, then the 0.0s.
 *
 * The cuts ([lowerBound]) use `Double.compare`, so each piece of a split merge writes a
 * contiguous part of the final order, and fixing its zeros within that part fixes them in the
 * whole. (Breaking ties on the raw bits inside the loop instead cost a second comparison per
 * element: on one thread a merge of two 2M runs took 1.4-1.5 x the `long` merge's time, this
 * one 1.3 x, as a bare `<` merge does.)
 */
internal class DoubleMergeSort(private val a: DoubleArray) : ParallelMergeSort(a.size) {
    private var buffer: DoubleArray = a

    override fun allocateBuffer() {
        buffer = DoubleArray(a.size)
    }

    override fun sortLeaf(inBuffer: Boolean, lo: Int, hi: Int) = java.util.Arrays.sort(if (inBuffer) buffer else a, lo, hi)

    override fun copyToBuffer(lo: Int, hi: Int) = System.arraycopy(a, lo, buffer, lo, hi - lo)

    override fun moveRun(fromBuffer: Boolean, lo: Int, hi: Int, to: Int) =
        if (fromBuffer) System.arraycopy(buffer, lo, a, to, hi - lo) else System.arraycopy(a, lo, buffer, to, hi - lo)

    /** With `Double.compare`'s order: the cuts run once per merge piece, so their cost does not matter. */
    override fun lowerBound(fromBuffer: Boolean, lo: Int, hi: Int, keyAt: Int): Int {
        val src = if (fromBuffer) buffer else a
        val key = src[keyAt]
        var l = lo
        var h = hi
        while (l < h) {
            val m = (l + h) ushr 1
            if (src[m].compareTo(key) < 0) l = m + 1 else h = m
        }
        return l
    }

    override fun merge(fromBuffer: Boolean, aLo: Int, aHi: Int, bLo: Int, bHi: Int, to: Int) {
        val src = if (fromBuffer) buffer else a
        val dst = if (fromBuffer) a else buffer
        val aEnd = firstNaN(src, aLo, aHi)
        val bEnd = firstNaN(src, bLo, bHi)
        var i = aLo
        var j = bLo
        var k = to
        while (i < aEnd && j < bEnd) {
            val x = src[i]
            val y = src[j]
            if (y < x) { dst[k++] = y; j++ } else { dst[k++] = x; i++ }
        }
        if (i < aEnd) System.arraycopy(src, i, dst, k, aEnd - i)
        if (j < bEnd) System.arraycopy(src, j, dst, k, bEnd - j)
        val numbersEnd = to + (aEnd - aLo) + (bEnd - bLo)
        fixZeros(dst, to, numbersEnd)
        System.arraycopy(src, aEnd, dst, numbersEnd, aHi - aEnd) // the NaNs, left run's first
        System.arraycopy(src, bEnd, dst, numbersEnd + (aHi - aEnd), bHi - bEnd)
    }

    /**
     * In `[lo, hi)` of [dst], sorted by `<` (no NaN), puts the zeros in `Double.compare`'s order:
     * they form one block, in which the -0.0s go first.
     */
    private fun fixZeros(dst: DoubleArray, lo: Int, hi: Int) {
        var l = lo
        var h = hi
        while (l < h) { // the first element not below zero
            val m = (l + h) ushr 1
            if (dst[m] < 0.0) l = m + 1 else h = m
        }
        val zerosFrom = l
        var end = zerosFrom
        var negative = 0
        while (end < hi && dst[end] == 0.0) {
            if (dst[end].toRawBits() < 0L) negative++
            end++
        }
        if (negative == 0 || negative == end - zerosFrom) return
        java.util.Arrays.fill(dst, zerosFrom, zerosFrom + negative, -0.0)
        java.util.Arrays.fill(dst, zerosFrom + negative, end, 0.0)
    }

    /** The first index of `[lo, hi)` of a sorted run that holds a NaN, or [hi]: NaNs sit at the run's end. */
    private fun firstNaN(src: DoubleArray, lo: Int, hi: Int): Int {
        if (lo == hi || !src[hi - 1].isNaN()) return hi
        var l = lo
        var h = hi - 1
        while (l < h) {
            val m = (l + h) ushr 1
            if (src[m].isNaN()) h = m else l = m + 1
        }
        return l
    }
}
