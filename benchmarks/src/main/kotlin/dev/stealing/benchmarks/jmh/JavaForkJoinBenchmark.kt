package dev.stealing.benchmarks.jmh

import dev.stealing.StealingDispatcher
import dev.stealing.benchmarks.Fib
import dev.stealing.benchmarks.JavaFib
import dev.stealing.benchmarks.JavaMergeSort
import dev.stealing.benchmarks.MergeSort
import org.openjdk.jmh.annotations.Benchmark
import org.openjdk.jmh.annotations.BenchmarkMode
import org.openjdk.jmh.annotations.Fork
import org.openjdk.jmh.annotations.Level
import org.openjdk.jmh.annotations.Measurement
import org.openjdk.jmh.annotations.Mode
import org.openjdk.jmh.annotations.OutputTimeUnit
import org.openjdk.jmh.annotations.Param
import org.openjdk.jmh.annotations.Scope
import org.openjdk.jmh.annotations.Setup
import org.openjdk.jmh.annotations.State
import org.openjdk.jmh.annotations.TearDown
import org.openjdk.jmh.annotations.Warmup
import java.util.concurrent.ForkJoinPool
import java.util.concurrent.TimeUnit

/**
 * Java fork/join, each form on its pool of [parallelism] workers: `pool.forkJoin` (`join`) and
 * `ForkedTask` `fork`/`join` (`forked`) on a `StealingDispatcher`; `RecursiveTask` /
 * `RecursiveAction` `fork`/`join` (`fjp-fork`) and `ForkJoinTask.invokeAll(a, b)`
 * (`fjp-invokeall`) on a `ForkJoinPool`. [fib]: fib(27), no cut-off ([JavaFib]). [sort]: 10M
 * ints with a cut-off of 8,192 ([JavaMergeSort]; `forked` sorts with `pool.forkJoin` too: there
 * is no `ForkedTask` merge sort), input copied back before each invocation and checked after.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = ["-Xmx2g"])
open class JavaForkJoinBenchmark {
    @Param("join", "forked", "fjp-fork", "fjp-invokeall")
    lateinit var form: String

    @Param("2")
    var parallelism: Int = 2

    private var pool: StealingDispatcher? = null
    private var fjp: ForkJoinPool? = null
    private val sortInput by lazy { MergeSort() }
    private val sorter by lazy { JavaMergeSort(sortInput) }

    @Setup(Level.Trial)
    fun open() {
        if (form.startsWith("fjp")) fjp = ForkJoinPool(parallelism) else pool = StealingDispatcher(parallelism, "jfj")
    }

    @TearDown(Level.Trial)
    fun close() {
        pool?.close()
        fjp?.shutdown()
    }

    @Benchmark
    fun fib(): Int = when (form) {
        "join" -> JavaFib.join(pool!!, 27)
        "forked" -> pool!!.let { p -> Fib.check(27, p.fork { Fib.fibForked(p, 27) }.join()) }
        "fjp-fork" -> JavaFib.forkJoinTask(fjp!!, 27)
        else -> JavaFib.invokeAll(fjp!!, 27)
    }

    @Benchmark
    fun sort() {
        sortInput.reset()
        when (form) {
            "join", "forked" -> sorter.join(pool!!)
            "fjp-fork" -> sorter.forkJoinTask(fjp!!)
            else -> sorter.invokeAll(fjp!!)
        }
        sortInput.check()
    }
}
