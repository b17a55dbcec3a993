package dev.stealing.benchmarks.jmh

import dev.stealing.benchmarks.CompletableFutureShapes
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
 * `CompletableFuture` stages on each executor ([CompletableFutureShapes]): a chain of 1,000
 * `thenApplyAsync` stages (`chain`), 10,000 `supplyAsync` joined by `allOf` (`allof`), and
 * 1,000 rounds of `thenComposeAsync` handing a value to a `supplyAsync` and back (`pingpong`).
 * One operation = one run of the shape, including the check of its result, timed by JMH from
 * outside: with the wake-up of a parked worker by the first submission and of the caller by the
 * last stage, which the report's `cf-chain` and `cf-pingpong` rows leave out (they time the
 * stages in the pool). The value returned, consumed by JMH, is that in-pool time.
 *
 * `fjp-common` is `ForkJoinPool.commonPool()`; with its default parallelism on a 2-core machine
 * (1), `CompletableFuture` on JDK 17 runs each stage on a new thread instead (JDK 25 uses the
 * pool's one worker). To compare with a common
 * pool of 2: `-jvmArgsAppend -Djava.util.concurrent.ForkJoinPool.common.parallelism=2`.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
open class CompletableFutureBenchmark : OnExecutor() {
    @Param("stealing", "fjp", "fjp-common", "tpe")
    override lateinit var executor: String

    @Param("chain", "allof", "pingpong")
    lateinit var shape: String

    override fun afterOpen() {
        require(shape in CompletableFutureShapes.ALL) { "shape must be one of ${CompletableFutureShapes.ALL}, was $shape" }
        require(executor in CompletableFutureShapes.EXECUTORS) { "runs on ${CompletableFutureShapes.EXECUTORS}, not $executor" }
    }

    @Benchmark
    fun run(): Double = CompletableFutureShapes.run(shape, subject.executor)
}
