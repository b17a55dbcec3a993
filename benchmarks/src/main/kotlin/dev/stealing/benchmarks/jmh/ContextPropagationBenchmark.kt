package dev.stealing.benchmarks.jmh

import dev.stealing.StealingDispatcher
import dev.stealing.StealingOptions
import dev.stealing.benchmarks.DispatchDrain
import io.micrometer.context.ContextRegistry
import io.micrometer.context.ThreadLocalAccessor
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
 * The cost of `StealingOptions.propagateContext` (part 1 of Duffy's series measured the same trade-off for
 * ExecutionContext flow): [DispatchDrain] batches of no-op `Runnable`s from one outside thread,
 * with propagation off and on, one ThreadLocal registered with context-propagation and set on
 * the submitting thread. Time per dispatch; with `-prof gc`, bytes per dispatch.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
open class ContextPropagationBenchmark {
    @Param("off", "on")
    lateinit var propagate: String

    private lateinit var pool: StealingDispatcher
    private lateinit var drain: DispatchDrain

    @Setup(Level.Trial)
    fun setUp() {
        ContextRegistry.getInstance().registerThreadLocalAccessor(RequestAccessor)
        REQUEST.set("request-42")
        val cores = Runtime.getRuntime().availableProcessors()
        pool = StealingDispatcher(cores, "ctx-bench", StealingOptions(propagateContext = propagate == "on"))
        drain = DispatchDrain(pool.executor, BATCH)
    }

    @TearDown(Level.Trial)
    fun tearDown() {
        pool.close()
        REQUEST.remove()
        ContextRegistry.getInstance().removeThreadLocalAccessor("bench.request")
    }

    @Benchmark
    @OperationsPerInvocation(BATCH)
    fun dispatch() = drain.run()

    private object RequestAccessor : ThreadLocalAccessor<String> {
        override fun key(): Any = "bench.request"
        override fun getValue(): String? = REQUEST.get()
        override fun setValue(value: String) = REQUEST.set(value)
        override fun setValue() = REQUEST.remove()
    }

    companion object {
        const val BATCH = 10_000
        private val REQUEST = ThreadLocal<String?>()
    }
}
