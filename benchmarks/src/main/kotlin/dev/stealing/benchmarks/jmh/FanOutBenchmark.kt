package dev.stealing.benchmarks.jmh

import dev.stealing.benchmarks.FanOut
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
 * The recursive fan-out of part 3 of Joe Duffy's 2008 thread-pool series ([FanOut]): `top` tasks from outside the pool, each submitting
 * `children` no-op tasks from inside it. One operation = all `top * (children + 1)` tasks run.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
open class FanOutBenchmark : OnExecutor() {
    @Param("stealing", "default", "fjp", "tpe", "lock", "lockwsq")
    override lateinit var executor: String

    /** `top x children`. */
    @Param("10000x100", "100x10000")
    lateinit var shape: String

    private lateinit var fanOut: FanOut

    override fun afterOpen() {
        val (top, children) = shape.split('x').map { it.toInt() }
        fanOut = FanOut(subject.executor, top, children)
    }

    @Benchmark
    fun fanOut() = fanOut.run()
}
