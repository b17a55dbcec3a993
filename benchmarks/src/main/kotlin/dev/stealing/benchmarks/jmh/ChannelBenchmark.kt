package dev.stealing.benchmarks.jmh

import dev.stealing.benchmarks.ChannelShapes
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
 * Channels and semaphores between coroutines ([ChannelShapes]) at parallelism 1, 2 and 4, on our
 * pool, `Dispatchers.Default.limitedParallelism(p)`, `ForkJoinPool(p)` and a fixed pool of `p`
 * threads. One operation = one run of the shape (100,000 acquisitions or messages); the report's
 * `ch-*` rows give the same in ns per acquisition or message.
 *
 * | shape | what |
 * |---|---|
 * | `chsem-{1,8}-{p,1000}` | a channel of capacity 1 or 8 as a semaphore, `p` or 1,000 coroutines |
 * | `sem-{1,8}-{p,1000}` | kotlinx's `Semaphore(1 or 8)`, `p` or 1,000 coroutines |
 * | `pc-rdv-{p,1000}`, `pc-buf-{p,1000}` | producers and consumers on a rendezvous or a buffered channel |
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
open class ChannelBenchmark : OnExecutor() {
    @Param("stealing", "default", "fjp", "tpe")
    override lateinit var executor: String

    @Param("1", "2", "4")
    override var parallelism: Int = 0

    @Param(
        "chsem-1-p", "chsem-1-1000", "chsem-8-p", "chsem-8-1000", "sem-1-p", "sem-1-1000", "sem-8-p", "sem-8-1000",
        "pc-rdv-p", "pc-rdv-1000", "pc-buf-p", "pc-buf-1000",
    )
    lateinit var shape: String

    override fun afterOpen() {
        require(shape in ChannelShapes.ALL) { "shape must be one of ${ChannelShapes.ALL}, was $shape" }
    }

    @Benchmark
    fun run(): Double = ChannelShapes.run(shape, subject)
}
