package dev.stealing.benchmarks.jmh

import dev.stealing.benchmarks.WithTimeoutCalls
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
 * `withTimeout(10 s) { small CPU step }` per call ([WithTimeoutCalls]): [CALLS] calls per
 * invocation, shared by one coroutine per pool thread; the score is wall time per call (operations
 * = calls). With `-prof gc`, `gc.alloc.rate.norm` is bytes per call, all threads included (the
 * `withTimeout` coroutine and lambda, the same on every executor, plus the executor's timer).
 * `variant=control` runs `coroutineScope` around the same step instead (no timer): the
 * difference is the timer's cost on that executor.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
open class WithTimeoutBenchmark : OnExecutor() {
    @Param("stealing", "default", "fjp")
    override lateinit var executor: String

    /** `timeout`: `withTimeout`; `control`: `coroutineScope` around the same step, no timer. */
    @Param("timeout", "control")
    var variant: String = "timeout"

    override fun afterOpen() {
        require(variant == "timeout" || variant == "control") { "variant must be timeout or control, was '$variant'" }
    }

    @Benchmark
    @OperationsPerInvocation(CALLS)
    fun withTimeoutCall(): Long = WithTimeoutCalls.run(subject, CALLS, subject.parallelism, timeout = variant == "timeout")

    companion object {
        const val CALLS = 100_000
    }
}
