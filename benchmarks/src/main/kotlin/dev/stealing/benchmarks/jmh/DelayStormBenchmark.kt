package dev.stealing.benchmarks.jmh

import dev.stealing.benchmarks.DelayStorm
import org.openjdk.jmh.annotations.Benchmark
import org.openjdk.jmh.annotations.BenchmarkMode
import org.openjdk.jmh.annotations.Fork
import org.openjdk.jmh.annotations.Level
import org.openjdk.jmh.annotations.Measurement
import org.openjdk.jmh.annotations.Mode
import org.openjdk.jmh.annotations.OutputTimeUnit
import org.openjdk.jmh.annotations.Param
import org.openjdk.jmh.annotations.Scope
import org.openjdk.jmh.annotations.State
import org.openjdk.jmh.annotations.TearDown
import org.openjdk.jmh.annotations.Warmup
import java.util.concurrent.TimeUnit

/**
 * A storm of `delay`s ([DelayStorm]): `coroutines` coroutines each doing 10 `delay(1-10 ms)`.
 * One operation = all of them done; the score is its wall time. Each iteration also prints the
 * last run's process CPU time and lateness percentiles (the report's figures).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
open class DelayStormBenchmark : OnExecutor() {
    @Param("stealing", "default", "fjp")
    override lateinit var executor: String

    @Param("100000")
    var coroutines: Int = 100_000

    private lateinit var storm: DelayStorm
    private var last: DelayStorm.Result? = null

    override fun afterOpen() {
        storm = DelayStorm(coroutines)
    }

    @Benchmark
    fun delayStorm(): Long = storm.run(subject).also { last = it }.cpuNanos

    @TearDown(Level.Iteration)
    fun printLast() {
        val r = last ?: return
        println("  [last run: process CPU %.1f ms, lateness p50 %.2f ms, p99 %.2f ms, max %.2f ms]".format(
            r.cpuNanos / 1e6, r.p50LatenessNanos / 1e6, r.p99LatenessNanos / 1e6, r.maxLatenessNanos / 1e6))
    }
}
