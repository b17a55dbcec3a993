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
 * fib(n) with one `async` per node and no cut-off: the scheduler's cost per
 * coroutine. `stealing-inline` uses `awaitInline`, `stealing-forkjoin` `forkJoin`
 * instead of `async`, every other executor plain `await`.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
open class FibCoroutineBenchmark : OnExecutor() {
    @Param("stealing", "stealing-inline", "stealing-forkjoin", "default", "fjp", "tpe", "lock", "lockwsq")
    override lateinit var executor: String

    @Param("27")
    var n: Int = 27

    @Benchmark
    fun fib(): Int = Fib.coroutines(subject, n)
}
