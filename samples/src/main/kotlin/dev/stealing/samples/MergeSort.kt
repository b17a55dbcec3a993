package dev.stealing.samples

import kotlinx.coroutines.async
import kotlinx.coroutines.coroutineScope
import java.util.SplittableRandom

/**
 * Parallel merge sort of 10M pseudo-random ints: ranges of at most 8,192 elements are sorted with
 * `Arrays.sort`, larger ones are split in two, the left half sorted in an `async` child while
 * the parent sorts the right half, then the halves merged through a scratch array. Checks every
 * result (sorted, same checksum as the input, equal to an `Arrays.sort` copy) and compares
 * `StealingDispatcher` (with `awaitInline` and plain `await`) with `Dispatchers.Default`.
 *
 * Run: `mvn -q -pl samples -am compile exec:java -Dexec.mainClass=dev.stealing.samples.MergeSortKt`
 */
fun main() {
    val size = 10_000_000
    val input = IntArray(size).also { a ->
        val rnd = SplittableRandom(42)
        for (i in a.indices) a[i] = rnd.nextInt()
    }
    val reference = input.copyOf()
    val referenceStart = System.nanoTime()
    java.util.Arrays.sort(reference)
    val referenceMs = (System.nanoTime() - referenceStart) / 1e6
    val inputChecksum = multisetChecksum(input)
    val sorter = MergeSorter(size, cutoff = 8_192)

    println("merge sort of %,d ints, cut-off %,d, %s".format(size, sorter.cutoff, roundsNote()))
    compareDispatchers(
        reset = { System.arraycopy(input, 0, sorter.work, 0, size) },
        check = { a ->
            val unsorted = firstUnsorted(a)
            when {
                unsorted >= 0 -> "not sorted at index $unsorted (${a[unsorted - 1]} > ${a[unsorted]})"
                multisetChecksum(a) != inputChecksum -> "not a permutation of the input (checksum differs)"
                !a.contentEquals(reference) -> "differs from the Arrays.sort copy"
                else -> null
            }
        },
    ) { inline -> sorter.sort(inline); sorter.work }
    println("checked: sorted, checksum %016x, equal to Arrays.sort (one thread, one cold run: %.0f ms)".format(inputChecksum, referenceMs))
}

/** Sorts [work] in place with a parallel merge sort; [scratch] is the merge buffer. */
private class MergeSorter(size: Int, val cutoff: Int) {
    val work = IntArray(size)
    private val scratch = IntArray(size)

    suspend fun sort(inline: Boolean) = sort(0, work.size, inline)

    private suspend fun sort(lo: Int, hi: Int, inline: Boolean) {
        if (hi - lo <= cutoff) {
            java.util.Arrays.sort(work, lo, hi)
            return
        }
        val mid = (lo + hi) ushr 1
        coroutineScope {
            val left = async { sort(lo, mid, inline) }
            sort(mid, hi, inline)
            left.awaitWith(inline)
        }
        merge(lo, mid, hi)
    }

    private fun merge(lo: Int, mid: Int, hi: Int) {
        val a = work
        val t = scratch
        System.arraycopy(a, lo, t, lo, hi - lo)
        var i = lo
        var j = mid
        var k = lo
        while (i < mid && j < hi) a[k++] = if (t[j] < t[i]) t[j++] else t[i++]
        while (i < mid) a[k++] = t[i++]
        while (j < hi) a[k++] = t[j++]
    }
}

/** The first index whose element is smaller than the one before it, or -1 if [a] is sorted. */
private fun firstUnsorted(a: IntArray): Int {
    for (i in 1 until a.size) if (a[i - 1] > a[i]) return i
    return -1
}

/** An order-independent checksum (sum of a mixed value per element): equal for any permutation. */
private fun multisetChecksum(a: IntArray): Long {
    var sum = 0L
    for (x in a) sum += splitMix64(x.toLong())
    return sum
}

