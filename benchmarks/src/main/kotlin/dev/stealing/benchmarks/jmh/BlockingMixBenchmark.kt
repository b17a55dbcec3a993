package dev.stealing.benchmarks.jmh

import dev.stealing.benchmarks.BusyWork
import dev.stealing.benchmarks.ExecutorUnderTest
import dev.stealing.benchmarks.WrongResult
import dev.stealing.blocking
import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.asCoroutineDispatcher
import kotlinx.coroutines.launch
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
import java.util.concurrent.ExecutorService
import java.util.concurrent.Executors
import java.util.concurrent.ForkJoinPool
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger
import java.util.concurrent.atomic.AtomicLong

/**
 * CPU work mixed with blocking calls: [CPU_TASKS] coroutines of about 50 us of busy work each
 * ([BusyWork], [CPU_ITERATIONS] steps) and [BLOCKING_TASKS] coroutines that block their thread
 * for [SLEEP_MS] ms (`Thread.sleep`), launched all at once from the benchmark thread (one
 * blocking task every [BLOCKING_EVERY] launches, so they are spread through the batch). Score:
 * the time until all have finished. On `cores` threads with no help for the blocked ones it
 * takes about `(CPU_TASKS x 50 us + BLOCKING_TASKS x SLEEP_MS) / cores` (about 250 ms on 2
 * cores); with the blocked threads replaced, about `CPU_TASKS x 50 us / cores` (about 50 ms).
 *
 * Variants (`-p variant=...`):
 * - `marked`: ours, `StealingDispatcher(cores)`, the sleep inside `blocking { }`: the pool
 *   runs another thread in the blocked worker's place;
 * - `unmarked`: the same pool, a plain `Thread.sleep`: only the pool's starvation detection
 *   (default `starvationInterval`, 100 ms) can notice a blocked worker;
 * - `default-io`: `Dispatchers.Default`, the sleep in `withContext(Dispatchers.IO) { }`;
 * - `fjp-managed`: `ForkJoinPool(cores)` as a dispatcher (`asCoroutineDispatcher()`), the sleep
 *   in `ForkJoinPool.managedBlock` ([SleepBlocker]), which compensates with a spare thread;
 * - `vthreads`: JDK 21+ only (fails at set-up before): `Executors.newVirtualThreadPerTaskExecutor()`
 *   as a dispatcher, each task on a virtual thread, the sleep plain (a sleeping virtual thread
 *   leaves its carrier; the JDK's carriers are a `ForkJoinPool` of `cores` threads).
 *
 * Each operation checks that every task ran once and that the CPU tasks' results add up to
 * the checksum computed in the trial set-up, which also prints how long the CPU work takes on
 * one thread (the lower bound is that over `cores`).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 5, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
open class BlockingMixBenchmark {
    @Param("marked", "unmarked", "default-io", "fjp-managed", "vthreads")
    lateinit var variant: String

    private var subject: ExecutorUnderTest? = null
    private lateinit var dispatcher: CoroutineDispatcher
    private var virtualThreads: ExecutorService? = null
    private var parallelism = ExecutorUnderTest.CORES
    private var mode = 0
    private var expectedSum = 0L
    private val cpuSum = AtomicLong()
    private val cpuRuns = AtomicInteger()
    private val blockingRuns = AtomicInteger()

    @Setup(Level.Trial)
    fun setUp() {
        mode = when (variant) {
            "marked" -> MARKED
            "unmarked" -> UNMARKED
            "default-io" -> DEFAULT_IO
            "fjp-managed" -> FJP_MANAGED
            "vthreads" -> VIRTUAL_THREADS
            else -> throw IllegalArgumentException("variant must be marked, unmarked, default-io, fjp-managed or vthreads, was '$variant'")
        }
        if (mode == VIRTUAL_THREADS) {
            // Reflection: this module compiles for JDK 17, which has no virtual threads.
            val factory = try {
                Executors::class.java.getMethod("newVirtualThreadPerTaskExecutor")
            } catch (e: NoSuchMethodException) {
                throw IllegalStateException("vthreads: no virtual threads before JDK 21 (this is ${System.getProperty("java.version")})")
            }
            val executor = factory.invoke(null) as ExecutorService
            virtualThreads = executor
            dispatcher = executor.asCoroutineDispatcher()
        } else {
            val s = ExecutorUnderTest.create(
                when (mode) {
                    MARKED, UNMARKED -> "stealing"
                    DEFAULT_IO -> "default"
                    else -> "fjp"
                },
            )
            subject = s
            dispatcher = s.dispatcher
            parallelism = s.parallelism
        }
        expectedSum = cpuChecksum()
        val t0 = System.nanoTime()
        check(cpuChecksum() == expectedSum) { "BusyWork is not deterministic" }
        val cpuMillis = (System.nanoTime() - t0) / 1e6
        println(
            "CPU work alone, one thread: %.1f ms (%.1f us a task); lower bound on %d cores: %.1f ms"
                .format(cpuMillis, cpuMillis * 1000 / CPU_TASKS, parallelism, cpuMillis / parallelism),
        )
    }

    /** The CPU tasks' results added up, on the calling thread (the expected checksum). */
    private fun cpuChecksum(): Long {
        var sum = 0L
        for (i in 0 until TASKS) if (!isBlocking(i)) sum += BusyWork.spin(CPU_ITERATIONS, i.toLong())
        return sum
    }

    @TearDown(Level.Trial)
    fun tearDown() {
        subject?.close()
        virtualThreads?.shutdown()
    }

    @Benchmark
    fun mix(): Long {
        cpuSum.set(0L)
        cpuRuns.set(0)
        blockingRuns.set(0)
        val dispatcher = this.dispatcher
        val mode = mode
        runBlocking {
            for (i in 0 until TASKS) {
                if (isBlocking(i)) {
                    launch(dispatcher) {
                        when (mode) {
                            MARKED -> blocking { Thread.sleep(SLEEP_MS) }
                            UNMARKED -> Thread.sleep(SLEEP_MS)
                            DEFAULT_IO -> withContext(Dispatchers.IO) { Thread.sleep(SLEEP_MS) }
                            FJP_MANAGED -> ForkJoinPool.managedBlock(SleepBlocker(SLEEP_MS))
                            else -> Thread.sleep(SLEEP_MS) // a virtual thread: it unmounts
                        }
                        blockingRuns.incrementAndGet()
                    }
                } else {
                    launch(dispatcher) {
                        cpuSum.addAndGet(BusyWork.spin(CPU_ITERATIONS, i.toLong()))
                        cpuRuns.incrementAndGet()
                    }
                }
            }
        }
        if (cpuRuns.get() != CPU_TASKS || blockingRuns.get() != BLOCKING_TASKS) {
            throw WrongResult("blocking mix ($variant): ${cpuRuns.get()} CPU and ${blockingRuns.get()} blocking tasks ran, expected $CPU_TASKS and $BLOCKING_TASKS")
        }
        if (cpuSum.get() != expectedSum) throw WrongResult("blocking mix ($variant): CPU checksum ${cpuSum.get()}, expected $expectedSum")
        return cpuSum.get()
    }

    /** `Thread.sleep(millis)` as a `ForkJoinPool.ManagedBlocker`: blocks once, then releasable. */
    class SleepBlocker(private val millis: Long) : ForkJoinPool.ManagedBlocker {
        private var done = false

        override fun block(): Boolean {
            Thread.sleep(millis)
            done = true
            return true
        }

        override fun isReleasable(): Boolean = done
    }

    companion object {
        const val CPU_TASKS = 2_000
        const val BLOCKING_TASKS = 40
        const val TASKS = CPU_TASKS + BLOCKING_TASKS

        /** Launch `i` is a blocking task when `i % BLOCKING_EVERY == BLOCKING_EVERY - 1`: 40 of 2,040. */
        const val BLOCKING_EVERY = TASKS / BLOCKING_TASKS
        const val SLEEP_MS = 10L

        /** About 50 us of busy work. */
        const val CPU_ITERATIONS = 50 * BusyWork.ITERATIONS_PER_MICRO

        private const val MARKED = 0
        private const val UNMARKED = 1
        private const val DEFAULT_IO = 2
        private const val FJP_MANAGED = 3
        private const val VIRTUAL_THREADS = 4

        fun isBlocking(i: Int): Boolean = i % BLOCKING_EVERY == BLOCKING_EVERY - 1
    }
}
