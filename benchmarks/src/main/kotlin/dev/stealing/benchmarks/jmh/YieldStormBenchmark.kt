package dev.stealing.benchmarks.jmh

import dev.stealing.benchmarks.YieldStorm
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
 * `yield`-heavy fairness ([YieldStorm]): `coroutines` coroutines each yielding `yields` times.
 * One operation = all of them done. The fairness figure (least progress when the first one
 * finishes) is printed by the report, not here.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
open class YieldStormBenchmark : OnExecutor() {
    @Param("stealing", "default", "fjp", "tpe", "lock", "lockwsq")
    override lateinit var executor: String

    @Param("1000")
    var coroutines: Int = 1_000

    @Param("100")
    var yields: Int = 100

    @Benchmark
    fun yieldStorm(): Double = YieldStorm.run(subject, coroutines, yields)
}
