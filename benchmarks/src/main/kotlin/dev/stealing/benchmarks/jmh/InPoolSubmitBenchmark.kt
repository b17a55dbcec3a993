package dev.stealing.benchmarks.jmh

import dev.stealing.benchmarks.InPoolSubmit
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
 * One task on the pool submits 10,000 no-op Runnables through the pool's executor ([InPoolSubmit]);
 * one operation = one such burst, timed by JMH from outside (so including the pool's wake-up).
 *
 * Each fork creates one pool, so the per-fork results show how much one pool instance can
 * differ from another: run several forks (`-f 5`) and compare the forks' scores, not only the
 * mean. The report's `pool-spread` row measures the same with several pools per JVM.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(5)
open class InPoolSubmitBenchmark : OnExecutor() {
    @Param("stealing", "fjp")
    override lateinit var executor: String

    private lateinit var work: InPoolSubmit

    override fun afterOpen() {
        work = InPoolSubmit(subject.executor)
    }

    /** Returns the in-pool time per task in ns (consumed by JMH); the score is the whole burst. */
    @Benchmark
    fun burst(): Double = work.run()
}
