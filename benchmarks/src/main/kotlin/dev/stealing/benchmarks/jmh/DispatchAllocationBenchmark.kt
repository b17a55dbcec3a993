package dev.stealing.benchmarks.jmh

import dev.stealing.benchmarks.DispatchDrain
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
 * Allocation per dispatched `Runnable` ([DispatchDrain]): one preallocated no-op task executed
 * [BATCH] times from this thread, then a wait for the drain that allocates nothing. Run with
 * `-prof gc`: `gc.alloc.rate.norm` is then bytes per dispatch (operations = dispatches). The
 * GC profiler counts every thread's allocation, so the pool threads' allocations are included.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
open class DispatchAllocationBenchmark : OnExecutor() {
    @Param("stealing", "default", "fjp", "tpe", "lock", "lockwsq")
    override lateinit var executor: String

    private lateinit var drain: DispatchDrain

    override fun afterOpen() {
        drain = DispatchDrain(subject.executor, BATCH)
    }

    @Benchmark
    @OperationsPerInvocation(BATCH)
    fun dispatch() = drain.run()

    companion object {
        const val BATCH = 10_000
    }
}
