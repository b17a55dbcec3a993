package dev.stealing.samples

import dev.stealing.StealingDispatcher
import dev.stealing.awaitInline
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import java.util.SplittableRandom

/**
 * Parallel merge sort with coroutines: a range longer than [CUTOFF] is split in two, the left
 * half sorted by an `async` child while the parent sorts the right half, then the parent
 * awaits the child and merges the halves. On a StealingDispatcher the child goes onto the
 * parent's worker deque, and `awaitInline()` takes it back out and runs it right there unless
 * an idle worker stole it first: most children cost a function call, not a dispatch. Anywhere
 * else `awaitInline()` is a plain `await()`, so the same function runs on `Dispatchers.Default`.
 */
suspend fun parallelSort(a: IntArray, scratch: IntArray, lo: Int = 0, hi: Int = a.size) {
    if (hi - lo <= CUTOFF) {
        a.sort(lo, hi)
        return
    }
    val mid = (lo + hi) ushr 1
    coroutineScope {
        val left = async { parallelSort(a, scratch, lo, mid) } // onto this worker's deque
        parallelSort(a, scratch, mid, hi)
        left.awaitInline() // not stolen? then it runs here, and this coroutine does not suspend
    }
    merge(a, scratch, lo, mid, hi)
}

/** Below this many elements a range is sorted sequentially. */
const val CUTOFF = 8_192

/**
 * Sorts 10M pseudo-random ints with [parallelSort] on a StealingDispatcher and on
 * `Dispatchers.Default`, alternately, 3 warm-up and 5 timed rounds each; checks every result
 * against `Arrays.sort` and prints the medians and how many children ran inline.
 *
 * Run: `mvn -q -pl samples -am compile exec:java -Dexec.mainClass=dev.stealing.samples.MergeSortKt`
 */
fun main() {
    val input = IntArray(10_000_000)
    val random = SplittableRandom(42)
    for (i in input.indices) input[i] = random.nextInt()
    val expected = input.copyOf().also { it.sort() }
    val work = IntArray(input.size)
    val scratch = IntArray(input.size)

    StealingDispatcher(name = "sort").use { pool ->
        val dispatchers = listOf("StealingDispatcher" to pool, "Dispatchers.Default" to Dispatchers.Default)
        val times = dispatchers.associate { it.first to ArrayList<Double>() }
        val before = pool.stats()
        repeat(8) { round ->
            for ((name, dispatcher) in dispatchers) {
                input.copyInto(work)
                val start = System.nanoTime()
                runBlocking { withContext(dispatcher) { parallelSort(work, scratch) } }
                val ms = (System.nanoTime() - start) / 1e6
                check(work.contentEquals(expected)) { "$name sorted wrongly" }
                if (round >= 3) times.getValue(name) += ms
            }
        }
        val after = pool.stats()

        println("merge sort of %,d ints, cut-off %,d, %d workers: median of 5 rounds".format(input.size, CUTOFF, pool.parallelism))
        val base = times.getValue("Dispatchers.Default").sorted()[2]
        for ((name, list) in times) {
            val median = list.sorted()[2]
            println("  %-20s %7.1f ms  %.2f x Dispatchers.Default".format(name, median, median / base))
        }
        println("  on the pool: %,d tasks run, %,d of them inline by awaitInline(), %,d stolen"
            .format(after.executed - before.executed, after.inlined - before.inlined, after.steals - before.steals))
        println("checked: every result equal to Arrays.sort")
    }
}

private fun merge(a: IntArray, scratch: IntArray, lo: Int, mid: Int, hi: Int) {
    System.arraycopy(a, lo, scratch, lo, hi - lo)
    var i = lo
    var j = mid
    var k = lo
    while (i < mid && j < hi) a[k++] = if (scratch[j] < scratch[i]) scratch[j++] else scratch[i++]
    while (i < mid) a[k++] = scratch[i++]
    while (j < hi) a[k++] = scratch[j++]
}
