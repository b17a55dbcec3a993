package dev.stealing.benchmarks.jmh

import dev.stealing.benchmarks.LoopShapes
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
 * The parallel-loop shapes of [LoopShapes] (`sum`, `sum-1worker`, `map-skewed`, `sort`), each on
 * our loops (`stealing`) and its peers (see [LoopShapes] for which executor id runs which
 * variant). One operation = one loop; the score is its time including the check of its result.
 * A combination that a shape does not run is skipped at set-up (JMH reports it as failed):
 * choose with `-p shape=sum -p executor=stealing,stealing-forkjoin,fjp,single`.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 5, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
open class ParallelLoopsBenchmark : OnExecutor() {
    @Param("stealing", "stealing-forkjoin", "default", "fjp", "single")
    override lateinit var executor: String

    @Param("sum", "sum-1worker", "map-skewed", "sort")
    lateinit var shape: String

    override fun afterOpen() {
        require(shape in LoopShapes.ALL) { "shape must be one of ${LoopShapes.ALL}, was $shape" }
        require(executor in LoopShapes.EXECUTORS.getValue(shape)) { "$shape runs on ${LoopShapes.EXECUTORS[shape]}, not $executor" }
    }

    @Benchmark
    fun run(): Double = LoopShapes.run(shape, subject)
}
