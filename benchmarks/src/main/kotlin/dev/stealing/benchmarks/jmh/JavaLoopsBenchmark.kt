package dev.stealing.benchmarks.jmh

import dev.stealing.benchmarks.JavaLoopShapes
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
 * The Java loop shapes of [JavaLoopShapes] (`java-sum`, `java-collect`, `java-map-skewed`,
 * `java-sort-objects`, `java-sort-doubles`) and the Kotlin user's `parallelFold` (`fold-user`),
 * each on our pool's methods (`stealing`) and on the Java standard library inside a
 * `ForkJoinPool` (`fjp`). One operation = one loop; the score is its time including the check
 * of its result. Choose with `-p shape=java-sum,fold-user -p executor=stealing,fjp`.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 5, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = ["-Xmx3g"])
open class JavaLoopsBenchmark : OnExecutor() {
    @Param("stealing", "fjp")
    override lateinit var executor: String

    @Param("java-sum", "java-collect", "java-map-skewed", "java-sort-objects", "java-sort-doubles", "fold-user")
    lateinit var shape: String

    override fun afterOpen() {
        require(shape in JavaLoopShapes.ALL) { "shape must be one of ${JavaLoopShapes.ALL}, was $shape" }
    }

    @Benchmark
    fun run(): Double = JavaLoopShapes.run(shape, subject)
}
