package dev.stealing.internal.loops

/**
 * [ParallelMergeSort] of a `DoubleArray`, in the order of `Arrays.sort(double[])` and
 * `Double.compare`: -0.0 before 0.0, and NaN after everything (positive infinity included).
 * The leaves are sorted with `Arrays.sort`, which gives that order; the merge and the cuts keep
 * it:
 * - a sorted run holds its NaNs at its end, so [merge] merges the runs' parts before their first
 *   NaN and appends the NaNs after them; and
 * - within those parts `<` is the order except that it sees -0.0 and 0.0 as equal, so on a tie
 *   the merge compares the raw bits (the sign bit makes -0.0's bits a negative long, 0.0's
 *   zero). Equal values other than zeros have equal bits, and the tie goes to the left run.
 *
 * The usual case costs one `<` per element, as the `long` merge does; the tie test runs only
 * when the right run's element is not smaller.
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
            if (y < x || (y == x && y.toRawBits() < x.toRawBits())) { dst[k++] = y; j++ } else { dst[k++] = x; i++ }
        }
        if (i < aEnd) System.arraycopy(src, i, dst, k, aEnd - i)
        if (j < bEnd) System.arraycopy(src, j, dst, k, bEnd - j)
        k += (aEnd - i) + (bEnd - j)
        System.arraycopy(src, aEnd, dst, k, aHi - aEnd) // the NaNs, left run's first
        System.arraycopy(src, bEnd, dst, k + (aHi - aEnd), bHi - bEnd)
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
