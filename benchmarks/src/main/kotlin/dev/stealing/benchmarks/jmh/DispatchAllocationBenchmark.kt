package dev.stealing.benchmarks.jmh

import dev.stealing.benchmarks.DispatchDrain
import dev.stealing.benchmarks.ExecutorUnderTest
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
open class DispatchAllocationBenchmark {
    @Param("stealing", "default", "fjp", "tpe", "lock", "lockwsq")
    lateinit var executor: String

    private lateinit var subject: ExecutorUnderTest
    private lateinit var drain: DispatchDrain

    @Setup(Level.Trial)
    fun setUp() {
        subject = ExecutorUnderTest.create(executor)
        drain = DispatchDrain(subject.executor, BATCH)
    }

    @TearDown(Level.Trial)
    fun tearDown() = subject.close()

    @Benchmark
    @OperationsPerInvocation(BATCH)
    fun dispatch() = drain.run()

    companion object {
        const val BATCH = 10_000
    }
}
