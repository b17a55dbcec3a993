package dev.stealing.benchmarks.jmh

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
import java.util.concurrent.TimeUnit

/**
 * Parallel merge sort of 10M ints with a cut-off ([MergeSort]): coroutines, `async` per split,
 * `awaitInline` on `stealing-inline`, `forkJoin` instead of `async` on `stealing-forkjoin`,
 * plain `await` elsewhere. The unsorted input is copied back
 * before, and the result compared with a reference after, each invocation (not measured).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 5, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = ["-Xmx2g"])
open class MergeSortBenchmark : OnExecutor() {
    @Param("stealing-inline", "stealing-forkjoin", "stealing", "default", "fjp", "tpe", "lock", "lockwsq")
    override lateinit var executor: String

    @Param("10000000")
    var size: Int = 10_000_000

    @Param("8192")
    var cutoff: Int = 8_192

    private lateinit var sort: MergeSort

    override fun afterOpen() {
        sort = MergeSort(size, cutoff)
    }

    @Setup(Level.Invocation)
    fun reset() = sort.reset()

    @TearDown(Level.Invocation)
    fun check() = sort.check()

    @Benchmark
    fun sort() = sort.sort(subject)
}
