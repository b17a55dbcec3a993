package dev.stealing.benchmarks.jmh

import dev.stealing.benchmarks.NoopFlood
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
 * The harness of part 1 of Joe Duffy's 2008 thread-pool series: 1M no-op `Runnable`s submitted from one outside thread ([NoopFlood]).
 * `total` is queue + drain; `queue` and `drain` time one phase each, the other phase running
 * in a per-invocation fixture (outside the measured time):
 * - `phases=separated`: workers are held at a gate while the producer queues (the article's harness: `true`);
 *   `queue` = cost of queuing alone, `drain` = cost of dequeuing and running alone;
 * - `phases=overlapped`: workers drain while the producer queues (the article's harness: `false`);
 *   `queue` = the producer's time with workers competing, `drain` = what is left after it.
 * One operation = the whole 1M.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
open class NoopFloodBenchmark : OnExecutor() {
    @Param("stealing", "default", "fjp", "tpe", "lock", "lockwsq")
    override lateinit var executor: String

    @Param("separated", "overlapped")
    lateinit var phases: String

    @Param("1000000")
    var count: Int = 1_000_000

    lateinit var flood: NoopFlood
    val separated: Boolean get() = phases == "separated"

    override fun afterOpen() {
        require(phases == "separated" || phases == "overlapped") { "phases must be separated or overlapped, was $phases" }
        flood = NoopFlood(subject.executor, count)
    }

    /** Queue phase measured; the drain runs in the invocation tear-down. */
    @State(Scope.Thread)
    open class QueuePhase {
        @Setup(Level.Invocation)
        fun arm(b: NoopFloodBenchmark) = b.flood.arm(b.separated)

        @TearDown(Level.Invocation)
        fun drain(b: NoopFloodBenchmark) {
            b.flood.release()
            b.flood.awaitDrain()
        }
    }

    /** Drain phase measured; the queuing runs in the invocation set-up. */
    @State(Scope.Thread)
    open class DrainPhase {
        @Setup(Level.Invocation)
        fun enqueue(b: NoopFloodBenchmark) {
            b.flood.arm(b.separated)
            b.flood.enqueue()
        }
    }

    @Benchmark
    fun queue(p: QueuePhase) = flood.enqueue()

    @Benchmark
    fun drain(p: DrainPhase) {
        flood.release()
        flood.awaitDrain()
    }

    @Benchmark
    fun total() {
        flood.arm(separated)
        flood.enqueue()
        flood.release()
        flood.awaitDrain()
    }
}
