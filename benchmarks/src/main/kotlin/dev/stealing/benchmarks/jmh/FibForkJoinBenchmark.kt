package dev.stealing.benchmarks.jmh

import dev.stealing.benchmarks.Fib
import org.openjdk.jmh.annotations.Benchmark
import org.openjdk.jmh.annotations.BenchmarkMode
import org.openjdk.jmh.annotations.Fork
import org.openjdk.jmh.annotations.Measurement
import org.openjdk.jmh.annotations.Mode
import org.openjdk.jmh.annotations.OutputTimeUnit
import org.openjdk.jmh.annotations.Param
import org.openjdk.jmh.annotations.Scope
import org.openjdk.jmh.annotations.State
import org.openjdk.jmh.annotations.Warmup
import java.util.concurrent.TimeUnit

/**
 * fib(n) as Java fork/join, no cut-off: `ForkedTask` (`fork` + `join`) on a stealing pool vs
 * `RecursiveTask` on `ForkJoinPool` of the same parallelism. Only these two executors have
 * fork/join (a blocking join on the fixed pools would deadlock).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
open class FibForkJoinBenchmark : OnExecutor() {
    @Param("stealing", "fjp")
    override lateinit var executor: String

    @Param("27")
    var n: Int = 27

    @Benchmark
    fun fib(): Int = Fib.forkJoin(subject, n)
}
