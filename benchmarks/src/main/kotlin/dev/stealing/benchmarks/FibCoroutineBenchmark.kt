package dev.stealing.benchmarks

import dev.stealing.StealingDispatcher
import dev.stealing.awaitInline
import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.ExecutorCoroutineDispatcher
import kotlinx.coroutines.async
import kotlinx.coroutines.asCoroutineDispatcher
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
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
import java.util.concurrent.ForkJoinPool
import java.util.concurrent.TimeUnit

/**
 * fib(n) with one `async` per node and no cut-off (SPEC section 5): the scheduler's cost per
 * coroutine. `stealing-inline` uses `awaitInline`, the others plain `await`.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
open class FibCoroutineBenchmark {
    @Param("stealing", "stealing-inline", "default", "fjp")
    lateinit var executor: String

    @Param("27")
    var n: Int = 27

    private lateinit var dispatcher: CoroutineDispatcher
    private var closeable: AutoCloseable? = null
    private var inline = false

    @Setup(Level.Trial)
    fun setUp() {
        val cores = Runtime.getRuntime().availableProcessors()
        inline = executor == "stealing-inline"
        dispatcher = when (executor) {
            "stealing", "stealing-inline" -> StealingDispatcher(cores, "bench").also { closeable = it }
            "default" -> Dispatchers.Default
            "fjp" -> ForkJoinPool(cores).asCoroutineDispatcher().also { closeable = it as ExecutorCoroutineDispatcher }
            else -> error("unknown executor $executor")
        }
    }

    @TearDown(Level.Trial)
    fun tearDown() {
        closeable?.close()
    }

    @Benchmark
    fun fib(): Int {
        val r = runBlocking { withContext(dispatcher) { fib(n, inline) } }
        check(r == EXPECTED[n]) { "fib($n) = $r" }
        return r
    }

    private suspend fun fib(n: Int, inline: Boolean): Int = if (n < 2) n else coroutineScope {
        val left = async { fib(n - 1, inline) }
        val right = fib(n - 2, inline)
        (if (inline) left.awaitInline() else left.await()) + right
    }

    private companion object {
        val EXPECTED = IntArray(40).also { f -> f[1] = 1; for (i in 2 until f.size) f[i] = f[i - 1] + f[i - 2] }
    }
}
