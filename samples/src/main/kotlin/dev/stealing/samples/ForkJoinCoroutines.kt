package dev.stealing.samples

import dev.stealing.StealingDispatcher
import dev.stealing.awaitInline
import dev.stealing.forkJoin
import dev.stealing.forkJoinAll
import kotlinx.coroutines.async
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import kotlin.system.exitProcess

/**
 * Divide-and-conquer coroutines with `forkJoin`: each split offers one half to the other
 * workers and runs the other half at once; a half nobody took is run by the caller too, as a
 * plain call. Three shapes a user would write:
 * - a reduction over an array with a cut-off (sum of squares of 20M longs), checked against a loop;
 * - independent jobs of different sizes with `forkJoinAll` (results in order);
 * - a fine-grained tree with no cut-off, fib(30) (832,039 forks per run), timed against the
 *   same tree with `async` + `awaitInline`, to show the cost per fork.
 *
 * Run: `mvn -q -pl samples -am compile exec:java -Dexec.mainClass=dev.stealing.samples.ForkJoinCoroutinesKt`
 */
fun main() {
    val a = LongArray(20_000_000) { (it % 1_000).toLong() }
    var expected = 0L
    for (x in a) expected += x * x

    val failures = ArrayList<String>()
    runBlocking {
        withContext(StealingDispatcher) {
            val sum = sumOfSquares(a, 0, a.size)
            println("sum of squares of %,d longs: %,d".format(a.size, sum))
            if (sum != expected) failures += "sum of squares: $sum, expected $expected"

            val sizes = listOf(3_000_000, 10, 500_000, 7_000_000, 1, 250_000)
            val counts = forkJoinAll(sizes.map { n -> suspend { countPrimesBelow(n) } }) // results in the order of `sizes`
            println("primes below $sizes: $counts")
            if (counts[1] != 4 || counts[4] != 0) failures += "prime counts: $counts"

            repeat(5) { round ->
                val t0 = System.nanoTime()
                val f1 = fib(30)
                val t1 = System.nanoTime()
                val f2 = fibAsync(30)
                val t2 = System.nanoTime()
                if (f1 != 832_040L || f2 != 832_040L) failures += "fib(30): $f1 / $f2, expected 832040"
                println("round %d: fib(30) with forkJoin %.1f ms, with async + awaitInline %.1f ms"
                    .format(round + 1, (t1 - t0) / 1e6, (t2 - t1) / 1e6))
            }
        }
    }
    val s = StealingDispatcher.stats()
    println("forks ${s.forks}: ${s.forksInlined} taken back and run by their caller, ${s.forksStolen} run by another worker")
    if (failures.isNotEmpty()) {
        println("FAILED: $failures")
        exitProcess(1)
    }
}

/** Sum of `x * x` over `a[lo until hi]`: split in halves down to 16,384 elements, a plain loop below. */
suspend fun sumOfSquares(a: LongArray, lo: Int, hi: Int): Long {
    if (hi - lo <= 16_384) {
        var s = 0L
        for (i in lo until hi) s += a[i] * a[i]
        return s
    }
    val mid = (lo + hi) ushr 1
    val (left, right) = forkJoin({ sumOfSquares(a, lo, mid) }, { sumOfSquares(a, mid, hi) })
    return left + right
}

/** fib(n), one `forkJoin` per node and no cut-off: nothing but fork overhead. */
suspend fun fib(n: Int): Long {
    if (n < 2) return n.toLong()
    val (a, b) = forkJoin({ fib(n - 1) }, { fib(n - 2) })
    return a + b
}

/** The same tree with a coroutine per node: `async` + `awaitInline`. */
private suspend fun fibAsync(n: Int): Long = if (n < 2) n.toLong() else coroutineScope {
    val left = async { fibAsync(n - 1) }
    fibAsync(n - 2) + left.awaitInline()
}

private fun countPrimesBelow(n: Int): Int {
    if (n < 3) return 0
    val composite = BooleanArray(n)
    var count = 0
    for (i in 2 until n) {
        if (composite[i]) continue
        count++
        var j = i.toLong() * i
        while (j < n) { composite[j.toInt()] = true; j += i }
    }
    return count
}
