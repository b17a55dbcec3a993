package dev.stealing.benchmarks

import dev.stealing.StealingDispatcher
import java.util.concurrent.Callable
import java.util.concurrent.ForkJoinPool
import java.util.concurrent.ForkJoinTask
import java.util.concurrent.RecursiveAction
import java.util.concurrent.RecursiveTask
import java.util.function.BiFunction

/**
 * Java's fork/join forms, the same tree on each pool: `pool.forkJoin(left, right, combine)` (the
 * pool's blocking fork/join) against `RecursiveTask` with `fork()`/`join()` and with
 * `ForkJoinTask.invokeAll(a, b)` on a `ForkJoinPool`. Written with Java's functional interfaces
 * as a Java caller writes them (the lambdas are Java SAM conversions, boxing an `Integer` result
 * as `Integer::sum` does).
 */
object JavaFib {
    /** fib([n]) with `pool.forkJoin` per node, no cut-off, started from outside the pool. */
    fun join(pool: StealingDispatcher, n: Int): Int = Fib.check(n, pool.fork { fibJoin(pool, n) }.join())

    /** fib([n]) with `RecursiveTask`: fork fib(n-1), compute fib(n-2) in place, join. */
    fun forkJoinTask(fjp: ForkJoinPool, n: Int): Int = Fib.check(n, fjp.invoke(Fib.FibTask(n)))

    /** fib([n]) with `ForkJoinTask.invokeAll(a, b)` per node. */
    fun invokeAll(fjp: ForkJoinPool, n: Int): Int = Fib.check(n, fjp.invoke(BothFib(n)))

    private val sum = BiFunction<Int, Int, Int> { a, b -> a + b }

    private fun fibJoin(pool: StealingDispatcher, n: Int): Int =
        if (n < 2) n else pool.forkJoin(Callable { fibJoin(pool, n - 1) }, Callable { fibJoin(pool, n - 2) }, sum)

    private class BothFib(private val n: Int) : RecursiveTask<Int>() {
        override fun compute(): Int {
            if (n < 2) return n
            val left = BothFib(n - 1)
            val right = BothFib(n - 2)
            ForkJoinTask.invokeAll(left, right)
            return left.rawResult + right.rawResult
        }
    }
}

/**
 * [MergeSort]'s tree (ranges of at most its cut-off sorted with `Arrays.sort`, then merged) with
 * Java's fork/join forms: `pool.forkJoin(left, right)` with two `Runnable`s, `RecursiveAction`
 * with `fork()`/`join()`, and `ForkJoinTask.invokeAll(a, b)`.
 */
class JavaMergeSort(private val sort: MergeSort) {
    fun join(pool: StealingDispatcher) {
        pool.fork { sortJoin(pool, 0, sort.size) }.join()
    }

    fun forkJoinTask(fjp: ForkJoinPool) {
        fjp.invoke(ForkedSort(0, sort.size))
    }

    fun invokeAll(fjp: ForkJoinPool) {
        fjp.invoke(BothSort(0, sort.size))
    }

    private fun sortJoin(pool: StealingDispatcher, lo: Int, hi: Int) {
        if (hi - lo <= sort.cutoff) {
            sort.work.sort(lo, hi)
            return
        }
        val mid = (lo + hi) ushr 1
        pool.forkJoin(Runnable { sortJoin(pool, mid, hi) }, Runnable { sortJoin(pool, lo, mid) })
        sort.merge(lo, mid, hi)
    }

    private inner class ForkedSort(private val lo: Int, private val hi: Int) : RecursiveAction() {
        override fun compute() {
            if (hi - lo <= sort.cutoff) {
                sort.work.sort(lo, hi)
                return
            }
            val mid = (lo + hi) ushr 1
            val left = ForkedSort(mid, hi).also { it.fork() }
            ForkedSort(lo, mid).compute()
            left.join()
            sort.merge(lo, mid, hi)
        }
    }

    private inner class BothSort(private val lo: Int, private val hi: Int) : RecursiveAction() {
        override fun compute() {
            if (hi - lo <= sort.cutoff) {
                sort.work.sort(lo, hi)
                return
            }
            val mid = (lo + hi) ushr 1
            ForkJoinTask.invokeAll(BothSort(mid, hi), BothSort(lo, mid))
            sort.merge(lo, mid, hi)
        }
    }
}
