package dev.stealing.benchmarks.jmh

import dev.stealing.benchmarks.ExecutorUnderTest
import dev.stealing.benchmarks.ScheduleFlood
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
 * Java `schedule(task, 0-10 ms)` from one outside thread ([ScheduleFlood]): `count` calls, then
 * a wait until all tasks ran. One operation = the whole flood. `stealing` = `pool.executor`,
 * `stpe` = `ScheduledThreadPoolExecutor(parallelism)`, `fjp` = `ForkJoinPool.schedule`, which
 * exists from JDK 25 on (on JDK 17 that parameter fails at set-up). Each iteration also prints the
 * last run's submit time and lateness percentiles.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
open class ScheduleFloodBenchmark : OnExecutor() {
    @Param("stealing", "stpe", "fjp")
    override lateinit var executor: String

    @Param("1000000")
    var count: Int = 1_000_000

    private lateinit var flood: ScheduleFlood
    private var last: ScheduleFlood.Result? = null

    override fun afterOpen() {
        require(executor != "fjp" || ExecutorUnderTest.forkJoinPoolSchedules) {
            "fjp: ForkJoinPool has no schedule before JDK 25 (this is ${System.getProperty("java.version")})"
        }
        flood = ScheduleFlood(count)
    }

    @Benchmark
    fun scheduleFlood(): Long = flood.run(subject).also { last = it }.totalNanos

    @TearDown(Level.Iteration)
    fun printLast() {
        val r = last ?: return
        println("  [last run: submitting %.1f ms, lateness p50 %.2f ms, p99 %.2f ms]".format(
            r.submitNanos / 1e6, r.p50LatenessNanos / 1e6, r.p99LatenessNanos / 1e6))
    }
}
