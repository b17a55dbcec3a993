package dev.stealing.benchmarks.jmh

import dev.stealing.benchmarks.ExecutorUnderTest
import dev.stealing.benchmarks.FanOut
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
 * Seed 000's recursive fan-out ([FanOut]): `top` tasks from outside the pool, each submitting
 * `children` no-op tasks from inside it. One operation = all `top * (children + 1)` tasks run.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
open class FanOutBenchmark {
    @Param("stealing", "default", "fjp", "tpe", "lock", "lockwsq")
    lateinit var executor: String

    /** `top x children`. */
    @Param("10000x100", "100x10000")
    lateinit var shape: String

    private lateinit var subject: ExecutorUnderTest
    private lateinit var fanOut: FanOut

    @Setup(Level.Trial)
    fun setUp() {
        val (top, children) = shape.split('x').map { it.toInt() }
        subject = ExecutorUnderTest.create(executor)
        fanOut = FanOut(subject.executor, top, children)
    }

    @TearDown(Level.Trial)
    fun tearDown() = subject.close()

    @Benchmark
    fun fanOut() = fanOut.run()
}
