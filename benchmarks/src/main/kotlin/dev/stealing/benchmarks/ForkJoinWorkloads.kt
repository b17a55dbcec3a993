package dev.stealing.benchmarks

import dev.stealing.StealingDispatcher
import dev.stealing.awaitInline
import dev.stealing.forkJoin
import kotlinx.coroutines.Deferred
import kotlinx.coroutines.async
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import java.util.concurrent.RecursiveTask

/*
 * The divide-and-conquer workloads: recursive trees of parallel tasks, run as coroutines (`async`
 * per branch with `await` or `awaitInline`, or `forkJoin` on `stealing-forkjoin`) and, for fib,
 * as Java fork/join. Fib is a regular tree with no cut-off (the scheduler's cost per task),
 * MergeSort a tree with a cut-off and real work at the leaves, Queens an irregular search tree.
 */

// ---------------------------------------------------------------------------------------------
// fib(n) with one coroutine per node, and with Java fork/join
// ---------------------------------------------------------------------------------------------

object Fib {
    private val EXPECTED = IntArray(47).also { f -> f[1] = 1; for (i in 2 until f.size) f[i] = f[i - 1] + f[i - 2] }

    fun expected(n: Int): Int = EXPECTED[n]

    fun check(n: Int, r: Int): Int {
        if (r != EXPECTED[n]) throw WrongResult("fib($n) = $r, expected ${EXPECTED[n]}")
        return r
    }

    /**
     * `async` per node, no cut-off; `awaitInline` on `stealing-inline`, plain `await` elsewhere;
     * on `stealing-forkjoin` one `forkJoin` per node instead of the `async`.
     */
    fun coroutines(ex: ExecutorUnderTest, n: Int): Int =
        check(n, runBlocking { withContext(ex.dispatcher) { if (ex.forkJoin) fibForkJoin(n) else fibAsync(n, ex.awaitInline) } })

    /** The same tree with `forkJoin`: fib(n-1) offered to thieves, fib(n-2) run at once, as rayon's `join`. */
    suspend fun fibForkJoin(n: Int): Int = if (n < 2) n else {
        val (a, b) = forkJoin({ fibForkJoin(n - 2) }, { fibForkJoin(n - 1) })
        a + b
    }

    private suspend fun fibAsync(n: Int, inline: Boolean): Int = if (n < 2) n else coroutineScope {
        val left = async { fibAsync(n - 1, inline) }
        val right = fibAsync(n - 2, inline)
        left.awaitWith(inline) + right
    }

    /**
     * Java fork/join, no cut-off, the same shape on both pools: fork fib(n-1), compute fib(n-2)
     * in place, join the fork. `ForkedTask` on a stealing pool, `RecursiveTask` on `fjp`.
     * Other executors have no fork/join (a blocking join on a fixed pool deadlocks).
     */
    fun forkJoin(ex: ExecutorUnderTest, n: Int): Int {
        val stealing = ex.stealing
        val fjp = ex.forkJoinPool
        val r = when {
            stealing != null -> stealing.fork { fibForked(stealing, n) }.join()
            fjp != null -> fjp.invoke(FibTask(n))
            else -> throw IllegalArgumentException("fork/join fib runs on stealing or fjp, not ${ex.id}")
        }
        return check(n, r)
    }

    /** fib([n]) with `ForkedTask`: fork fib(n-1), compute fib(n-2) in place, join the fork. */
    internal fun fibForked(pool: StealingDispatcher, n: Int): Int {
        if (n < 2) return n
        val left = pool.fork { fibForked(pool, n - 1) }
        val right = fibForked(pool, n - 2)
        return left.join() + right
    }

    /** fib([n]) as `RecursiveTask`: fork fib(n-1), compute fib(n-2) in place, join. */
    internal class FibTask(private val n: Int) : RecursiveTask<Int>() {
        override fun compute(): Int {
            if (n < 2) return n
            val left = FibTask(n - 1).also { it.fork() }
            val right = FibTask(n - 2).compute()
            return left.join() + right
        }
    }
}

/** `awaitInline()` or `await()`. */
suspend fun <T> Deferred<T>.awaitWith(inline: Boolean): T = if (inline) awaitInline() else await()

// ---------------------------------------------------------------------------------------------
// Parallel merge sort with a cut-off
// ---------------------------------------------------------------------------------------------

/**
 * Merge sort of [size] pseudo-random ints (fixed seed): ranges of at most [cutoff] elements are
 * sorted with `Arrays.sort`, larger ones split in two, the left half sorted in an `async` child,
 * the right half in place, then merged through a scratch array. [reset] copies the unsorted input
 * back (not part of the measured time); [check] compares with a reference sorted once.
 */
class MergeSort(val size: Int = 10_000_000, val cutoff: Int = 8_192) {
    private val input = IntArray(size).also { a ->
        val rnd = java.util.SplittableRandom(42)
        for (i in a.indices) a[i] = rnd.nextInt()
    }
    private val reference = input.copyOf().also { it.sort() }
    /** The array being sorted (the Java fork/join forms in JavaForkJoin.kt sort it too). */
    internal val work = IntArray(size)
    private val scratch = IntArray(size)

    fun reset() = System.arraycopy(input, 0, work, 0, size)

    fun sort(ex: ExecutorUnderTest) = runBlocking {
        withContext(ex.dispatcher) { if (ex.forkJoin) sortForkJoin(0, size) else sort(0, size, ex.awaitInline) }
    }

    fun check() {
        if (!work.contentEquals(reference)) {
            val i = work.indices.first { work[it] != reference[it] }
            throw WrongResult("merge sort of $size: wrong element at $i (${work[i]}, expected ${reference[i]})")
        }
    }

    /** reset + sort + check. */
    fun run(ex: ExecutorUnderTest) {
        reset(); sort(ex); check()
    }

    private suspend fun sort(lo: Int, hi: Int, inline: Boolean) {
        if (hi - lo <= cutoff) {
            work.sort(lo, hi)
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

    /** The same with `forkJoin`: the left half offered to thieves, the right half sorted at once. */
    private suspend fun sortForkJoin(lo: Int, hi: Int) {
        if (hi - lo <= cutoff) {
            work.sort(lo, hi)
            return
        }
        val mid = (lo + hi) ushr 1
        forkJoin({ sortForkJoin(mid, hi) }, { sortForkJoin(lo, mid) })
        merge(lo, mid, hi)
    }

    /** Merges the sorted ranges `lo until mid` and `mid until hi` of [work]. */
    internal fun merge(lo: Int, mid: Int, hi: Int) {
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

// ---------------------------------------------------------------------------------------------
// N-Queens: an irregular search tree, one fork per candidate square, no cut-off
// ---------------------------------------------------------------------------------------------

/**
 * Counts the placements of [n] queens (bitmask backtracking). Every candidate square of every
 * row is a parallel branch, no cut-off: `async` per candidate (awaited newest first, with
 * `awaitInline` on `stealing-inline`), or on `stealing-forkjoin` the candidates of a row split
 * in halves with `forkJoin`, recursively (n - 1 forks for n candidates).
 */
object Queens {
    private val EXPECTED = intArrayOf(1, 1, 0, 0, 2, 10, 4, 40, 92, 352, 724, 2680, 14200, 73712)

    fun run(ex: ExecutorUnderTest, n: Int): Int {
        val r = runBlocking {
            withContext(ex.dispatcher) { if (ex.forkJoin) rowForkJoin(n, 0, 0, 0, 0) else rowAsync(n, 0, 0, 0, 0, ex.awaitInline) }
        }
        if (r != EXPECTED[n]) throw WrongResult("queens($n) = $r, expected ${EXPECTED[n]}")
        return r
    }

    private fun free(n: Int, cols: Int, d1: Int, d2: Int): Int = ((1 shl n) - 1) and (cols or d1 or d2).inv()

    private suspend fun rowAsync(n: Int, row: Int, cols: Int, d1: Int, d2: Int, inline: Boolean): Int {
        if (row == n) return 1
        var avail = free(n, cols, d1, d2)
        if (avail == 0) return 0
        return coroutineScope {
            val children = ArrayList<Deferred<Int>>(Integer.bitCount(avail))
            while (avail != 0) {
                val bit = avail and -avail
                avail = avail xor bit
                children += async { rowAsync(n, row + 1, cols or bit, (d1 or bit) shl 1, (d2 or bit) ushr 1, inline) }
            }
            var sum = 0
            for (i in children.indices.reversed()) sum += children[i].awaitWith(inline)
            sum
        }
    }

    private suspend fun rowForkJoin(n: Int, row: Int, cols: Int, d1: Int, d2: Int): Int {
        if (row == n) return 1
        val avail = free(n, cols, d1, d2)
        return if (avail == 0) 0 else squares(n, row, cols, d1, d2, avail)
    }

    /** The candidates [avail] of one row: one square placed, or the set split in two halves. */
    private suspend fun squares(n: Int, row: Int, cols: Int, d1: Int, d2: Int, avail: Int): Int {
        if (avail and (avail - 1) == 0) return rowForkJoin(n, row + 1, cols or avail, (d1 or avail) shl 1, (d2 or avail) ushr 1)
        var low = avail // the lower half of the candidate bits
        repeat(Integer.bitCount(avail) / 2) { low = low and (low - 1) }
        low = avail xor low
        val high = avail xor low
        val (a, b) = forkJoin({ squares(n, row, cols, d1, d2, low) }, { squares(n, row, cols, d1, d2, high) })
        return a + b
    }
}
