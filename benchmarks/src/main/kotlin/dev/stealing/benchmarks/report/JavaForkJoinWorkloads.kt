package dev.stealing.benchmarks.report

import dev.stealing.benchmarks.ExecutorUnderTest
import dev.stealing.benchmarks.JavaFib
import dev.stealing.benchmarks.JavaMergeSort
import dev.stealing.benchmarks.MergeSort

/**
 * The report's rows of Java fork/join (ids `java-fj-*`): the pool's fastest Java form,
 * `pool.forkJoin` (`stealing`), against `ForkJoinPool` of the same parallelism (`fjp`) with
 * `RecursiveTask`/`RecursiveAction` `fork()`/`join()`, and in rows of their own with
 * `ForkJoinTask.invokeAll(a, b)`: fib(27) with no cut-off, and [MergeSort]'s 10M ints with its
 * cut-off. (`ForkedTask`'s own `fork`/`join` keeps its row, `fib-forkjoin`.) The targets, in
 * [ReportOutput] through [target]: fib at most 0.9 x the `fjp` form of its row; the merge sort,
 * which spends well under 1% of its time forking and joining (1,220 leaves of 8,192 ints sorted
 * by `Arrays.sort`, then merges), at most 1.0 x.
 */
object JavaForkJoinWorkloads {
    private const val FIB_N = 27

    /** fib's trees take a few ms: this many per measurement, reported as the mean. */
    private const val FIB_REPEATS = 10

    private var sort: MergeSort? = null

    /** Whether [metric] is one of these rows. */
    fun isJavaForkJoin(metric: String): Boolean = metric.startsWith("java-fj-")

    /** The target of [metric]'s `stealing` row: at most this x `fjp`. */
    fun target(metric: String): Double = if (metric.startsWith("java-fj-fib")) 0.9 else 1.0

    fun workloads(): List<Workload> = listOf(
        row("java-fj-fib", "fib($FIB_N), Java fork/join: pool.forkJoin(left, right, combine) vs RecursiveTask fork()/join()", "fib pool.forkJoin") { ex ->
            fibTimed(ex) { fjp -> JavaFib.forkJoinTask(fjp, FIB_N) }
        },
        row("java-fj-fib-invokeall", "fib($FIB_N), Java fork/join: pool.forkJoin(left, right, combine) vs ForkJoinTask.invokeAll(a, b)", "fib vs invokeAll") { ex ->
            fibTimed(ex) { fjp -> JavaFib.invokeAll(fjp, FIB_N) }
        },
        row("java-fj-sort", "merge sort 10M ints, cut-off 8192, Java fork/join: pool.forkJoin(left, right) vs RecursiveAction fork()/join()", "sort pool.forkJoin") { ex ->
            sortTimed(ex) { s, fjp -> s.forkJoinTask(fjp) }
        },
        row("java-fj-sort-invokeall", "merge sort 10M ints, cut-off 8192, Java fork/join: pool.forkJoin(left, right) vs ForkJoinTask.invokeAll(a, b)", "sort vs invokeAll") { ex ->
            sortTimed(ex) { s, fjp -> s.invokeAll(fjp) }
        },
    )

    private fun row(id: String, title: String, label: String, run: (ExecutorUnderTest) -> Double) =
        Workload(id, listOf(Metric(id, title, "ms", label)), listOf("stealing", "fjp"), { ex -> mapOf(id to run(ex)) })

    private inline fun fibTimed(ex: ExecutorUnderTest, crossinline onFjp: (java.util.concurrent.ForkJoinPool) -> Int): Double {
        val pool = ex.stealing
        val fjp = ex.forkJoinPool
        return timed {
            repeat(FIB_REPEATS) {
                when {
                    pool != null -> JavaFib.join(pool, FIB_N)
                    fjp != null -> onFjp(fjp)
                    else -> throw IllegalArgumentException("Java fork/join runs on stealing or fjp, not ${ex.id}")
                }
            }
        } / FIB_REPEATS
    }

    private inline fun sortTimed(ex: ExecutorUnderTest, crossinline onFjp: (JavaMergeSort, java.util.concurrent.ForkJoinPool) -> Unit): Double {
        val s = sort ?: MergeSort().also { sort = it }
        val java = JavaMergeSort(s)
        s.reset()
        val pool = ex.stealing
        val fjp = ex.forkJoinPool
        val t = timed {
            when {
                pool != null -> java.join(pool)
                fjp != null -> onFjp(java, fjp)
                else -> throw IllegalArgumentException("Java fork/join runs on stealing or fjp, not ${ex.id}")
            }
        }
        s.check()
        return t
    }

    private inline fun timed(block: () -> Unit): Double {
        val t0 = System.nanoTime()
        block()
        return (System.nanoTime() - t0) / 1e6
    }
}
