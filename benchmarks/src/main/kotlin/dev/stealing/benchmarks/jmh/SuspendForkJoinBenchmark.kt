package dev.stealing.benchmarks.jmh

import dev.stealing.benchmarks.Fib
import dev.stealing.benchmarks.Queens
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
 * Divide-and-conquer coroutines: `forkJoin` (`stealing-forkjoin`) against `async` with
 * `awaitInline` (`stealing-inline`), plain `await` on our pool (`stealing`) and on
 * `Dispatchers.Default` (`default`). fib(n) has one fork per node and no cut-off (n - 1 = 27:
 * 317,810 forks per op, so `-prof gc`'s `gc.alloc.rate.norm` / 317,810 = bytes per fork);
 * N-Queens(12) one fork per candidate square. Java's `RecursiveTask` for the same fib tree is
 * `FibForkJoinBenchmark`.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
open class SuspendForkJoinBenchmark : OnExecutor() {
    @Param("stealing-forkjoin", "stealing-inline", "stealing", "default")
    override lateinit var executor: String

    @Benchmark
    fun fib27(): Int = Fib.coroutines(subject, 27)

    @Benchmark
    fun queens12(): Int = Queens.run(subject, 12)
}
