package dev.stealing.internal.loops

/**
 * [ParallelMergeSort] of an object array with a [comparator], stable as `Arrays.sort(T[],
 * Comparator)` is: the leaves are sorted with that (a stable sort), the merge takes from the
 * left run on ties, and [upperBound] cuts the left run after the elements equal to a key taken
 * from the right run, so no two equal elements change their order. The buffer is an `Object[]`:
 * nothing outside this class sees it.
 */
internal class ObjectMergeSort<T>(
    private val a: Array<T>,
    private val comparator: Comparator<in T>,
) : ParallelMergeSort(a.size) {
    private var buffer: Array<T> = a

    @Suppress("UNCHECKED_CAST") // erased: an Object[] holding only the array's elements
    override fun allocateBuffer() {
        buffer = arrayOfNulls<Any?>(a.size) as Array<T>
    }

    override fun sortLeaf(inBuffer: Boolean, lo: Int, hi: Int) = java.util.Arrays.sort(if (inBuffer) buffer else a, lo, hi, comparator)

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
            if (comparator.compare(src[m], key) < 0) l = m + 1 else h = m
        }
        return l
    }

    override fun upperBound(fromBuffer: Boolean, lo: Int, hi: Int, keyAt: Int): Int {
        val src = if (fromBuffer) buffer else a
        val key = src[keyAt]
        var l = lo
        var h = hi
        while (l < h) {
            val m = (l + h) ushr 1
            if (comparator.compare(src[m], key) <= 0) l = m + 1 else h = m
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
            if (comparator.compare(y, x) < 0) { dst[k++] = y; j++ } else { dst[k++] = x; i++ }
        }
        if (i < aHi) System.arraycopy(src, i, dst, k, aHi - i)
        if (j < bHi) System.arraycopy(src, j, dst, k, bHi - j)
    }
}
