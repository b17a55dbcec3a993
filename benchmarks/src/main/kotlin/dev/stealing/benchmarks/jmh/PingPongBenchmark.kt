package dev.stealing.benchmarks.jmh

import dev.stealing.benchmarks.PingPong
import org.openjdk.jmh.annotations.Benchmark
import org.openjdk.jmh.annotations.BenchmarkMode
import org.openjdk.jmh.annotations.Fork
import org.openjdk.jmh.annotations.Measurement
import org.openjdk.jmh.annotations.Mode
import org.openjdk.jmh.annotations.OperationsPerInvocation
import org.openjdk.jmh.annotations.OutputTimeUnit
import org.openjdk.jmh.annotations.Param
import org.openjdk.jmh.annotations.Scope
import org.openjdk.jmh.annotations.State
import org.openjdk.jmh.annotations.Warmup
import java.util.concurrent.TimeUnit

/**
 * Ping-pong between two coroutines through rendezvous channels ([PingPong]); the score is the
 * time of one round trip (each invocation makes [ROUND_TRIPS]). `side=pool`: both coroutines on
 * the executor; `side=caller`: the pinger on the caller's `runBlocking` thread, so each round
 * trip wakes a pool thread.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
open class PingPongBenchmark : OnExecutor() {
    @Param("stealing", "default", "fjp", "tpe", "lock", "lockwsq")
    override lateinit var executor: String

    @Param("pool", "caller")
    lateinit var side: String

    override fun afterOpen() {
        require(side == "pool" || side == "caller") { "side must be pool or caller, was $side" }
    }

    @Benchmark
    @OperationsPerInvocation(ROUND_TRIPS)
    fun roundTrip(): Long = PingPong.run(subject, ROUND_TRIPS, fromCaller = side == "caller")

    companion object {
        const val ROUND_TRIPS = 10_000
    }
}
