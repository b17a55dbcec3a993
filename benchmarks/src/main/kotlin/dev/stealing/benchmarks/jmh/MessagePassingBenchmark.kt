package dev.stealing.benchmarks.jmh

import dev.stealing.benchmarks.MessagePassingShapes
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
 * The message-passing shapes ([MessagePassing]), each against `Dispatchers.Default`, a
 * `ForkJoinPool` dispatcher and a one-thread executor dispatcher (`single`). One operation =
 * one run of the shape; `cores` = the available processors.
 *
 * | shape | what |
 * |---|---|
 * | `chain-1`, `chain-8` | 1 or 8 coroutines, each 1,000 x `async { v + 1 }.await()` |
 * | `jobs-1`, `jobs-8` | 1 or 8 jobs released together over a shared 2,048-long array, 2 yields each |
 * | `actor-1x1`, `actor-1xN` | one server actor (1,024-long state), 1 or `cores` requesters, 2,000 requests each |
 * | `actor-NxN` | `cores` servers and `cores` requesters, 2,000 requests each |
 * | `ring-1`, `ring-1024` | `cores` actors in a cycle, 1,000 laps of one message, state of 1 or 1,024 longs |
 * | `pingpong-1`, `pingpong-N` | 1 or `cores` pairs of actors, 10,000 messages each |
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
open class MessagePassingBenchmark : OnExecutor() {
    @Param("stealing", "default", "fjp", "single")
    override lateinit var executor: String

    @Param("chain-1", "chain-8", "jobs-1", "jobs-8", "actor-1x1", "actor-1xN", "actor-NxN", "ring-1", "ring-1024", "pingpong-1", "pingpong-N")
    lateinit var shape: String

    override fun afterOpen() {
        require(shape in MessagePassingShapes.ALL) { "shape must be one of ${MessagePassingShapes.ALL}, was $shape" }
    }

    @Benchmark
    fun run(): Long = MessagePassingShapes.run(shape, subject)
}
