package dev.stealing.benchmarks.jmh

import dev.stealing.benchmarks.PekkoShapes
import org.apache.pekko.actor.ActorSystem
import org.openjdk.jmh.annotations.Benchmark
import org.openjdk.jmh.annotations.BenchmarkMode
import org.openjdk.jmh.annotations.Fork
import org.openjdk.jmh.annotations.Level
import org.openjdk.jmh.annotations.Measurement
import org.openjdk.jmh.annotations.Mode
import org.openjdk.jmh.annotations.OperationsPerInvocation
import org.openjdk.jmh.annotations.OutputTimeUnit
import org.openjdk.jmh.annotations.Param
import org.openjdk.jmh.annotations.Scope
import org.openjdk.jmh.annotations.Setup
import org.openjdk.jmh.annotations.State
import org.openjdk.jmh.annotations.TearDown
import org.openjdk.jmh.annotations.Warmup
import java.util.concurrent.TimeUnit

/**
 * Apache Pekko's actor benchmark shapes ([PekkoShapes]) on a Pekko dispatcher whose executor is
 * ours (`stealing`, `stealing-affinity`) or Pekko's (`fjp` = `fork-join-executor`, `tpe` =
 * `thread-pool-executor`, `affinity` = `affinity-pool-executor`), each with as many threads as
 * cores; the score is the time per message. `throughput` applies to the ping-pong shapes (the
 * flood and tell-only shapes run at 50, as in Pekko's benchmarks).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 5, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
open class PekkoActorBenchmark {
    @Param("stealing", "stealing-affinity", "fjp", "tpe", "affinity")
    lateinit var executor: String

    @Param("50", "1")
    var throughput: Int = 50

    private lateinit var system: ActorSystem
    private val cores = Runtime.getRuntime().availableProcessors()

    @Setup(Level.Trial)
    fun setUp() {
        require(executor in PekkoShapes.EXECUTORS) { "executor must be one of ${PekkoShapes.EXECUTORS}, was $executor" }
        require(throughput in PekkoShapes.THROUGHPUTS) { "throughput must be one of ${PekkoShapes.THROUGHPUTS}, was $throughput" }
        system = PekkoShapes.newSystem(cores, listOf(executor))
    }

    @TearDown(Level.Trial)
    fun tearDown() = PekkoShapes.terminate(system)

    private fun dispatcher(t: Int) = PekkoShapes.dispatcherId(executor, t)

    @Benchmark
    @OperationsPerInvocation(MESSAGES)
    fun pingPongFewerPairsThanCores(): Double =
        PekkoShapes.pingPong(system, dispatcher(throughput), PekkoShapes.pairs("pp-few", cores), MESSAGES / PekkoShapes.pairs("pp-few", cores), throughput)

    @Benchmark
    @OperationsPerInvocation(MESSAGES)
    fun pingPongMorePairsThanCores(): Double =
        PekkoShapes.pingPong(system, dispatcher(throughput), PekkoShapes.pairs("pp-many", cores), MESSAGES / PekkoShapes.pairs("pp-many", cores), throughput)

    @Benchmark
    @OperationsPerInvocation(MESSAGES)
    fun floodPipe(): Double = PekkoShapes.floodPipe(system, dispatcher(50), MESSAGES)

    @Benchmark
    @OperationsPerInvocation(MESSAGES)
    fun tellOnly(): Double = PekkoShapes.tellOnly(system, dispatcher(50), MESSAGES)

    companion object {
        const val MESSAGES = 200_000
    }
}
