package dev.stealing.benchmarks

import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeout
import java.lang.management.ManagementFactory
import java.util.concurrent.TimeUnit

/*
 * The timer workloads: `withTimeout` per call around a small CPU step (a timer registered and
 * disposed of every time, with a control of the same loop without a timer), a storm of
 * coroutine `delay`s, and a flood of Java `schedule` calls. The last two record every timer's
 * lateness (when it ran minus when it was due) and return percentiles of it.
 */

/** The value at [fraction] (0.99 = p99) of [values] (nearest rank; sorts [values] in place). */
fun percentile(values: LongArray, fraction: Double): Long {
    require(values.isNotEmpty()) { "no values" }
    values.sort()
    val rank = Math.ceil(fraction * values.size).toInt().coerceIn(1, values.size)
    return values[rank - 1]
}

/**
 * `withTimeout` around a small CPU step, the common server pattern: [calls] calls in all, split
 * over [coroutines] coroutines on the executor, each call `withTimeout(10 s) { [STEP] BusyWork
 * steps }` (about 0.1 us). The timeout never fires: every call registers a timer and disposes of
 * it. On `stealing` the timer goes into the worker's own heap; on `Dispatchers.Default` (and
 * `fjp` on JDK 17) into kotlinx's `DefaultExecutor` heap; on `fjp` on JDK 25 into the pool's
 * `schedule`. Returns the number of calls that returned, checked.
 */
object WithTimeoutCalls {
    const val TIMEOUT_MILLIS = 10_000L

    /** BusyWork steps inside each call (about 0.1 us on the reference machine). */
    const val STEP = 50

    /**
     * With [timeout] false, the control: `coroutineScope { same step }` instead of `withTimeout`,
     * a scope coroutine of the same kind but no timer, so the difference between the two is what
     * the timer (and `withTimeout`'s own handler) costs on that executor.
     */
    fun run(ex: ExecutorUnderTest, calls: Int, coroutines: Int, timeout: Boolean = true): Long {
        require(coroutines in 1..calls) { "coroutines must be in 1..$calls, was $coroutines" }
        val done = java.util.concurrent.atomic.AtomicLong()
        runBlocking {
            withContext(ex.dispatcher) {
                for (c in 0 until coroutines) {
                    // The first calls % coroutines coroutines take one call more.
                    val mine = calls / coroutines + if (c < calls % coroutines) 1 else 0
                    launch {
                        var x = c + 1L
                        if (timeout) {
                            for (i in 0 until mine) x = withTimeout(TIMEOUT_MILLIS) { BusyWork.spin(STEP, x) }
                        } else {
                            for (i in 0 until mine) x = coroutineScope { BusyWork.spin(STEP, x) }
                        }
                        if (x == 0L) throw WrongResult("withTimeout: the busy step returned 0")
                        done.addAndGet(mine.toLong())
                    }
                }
            }
        }
        val n = done.get()
        if (n != calls.toLong()) throw WrongResult("withTimeout: $n calls returned, expected $calls")
        return n
    }
}

/**
 * [coroutines] coroutines on the executor, each doing [delaysEach] `delay`s of 1-10 ms
 * (pseudo-random, fixed seed: the same delays on every executor). Every delay's lateness (time
 * actually slept minus the time asked for) is recorded; a delay that returns early is a wrong
 * result. [run] returns wall time, process CPU time (all threads of the JVM: the pool, kotlinx's
 * timer thread if used, GC, the driver) and lateness percentiles.
 *
 * The coroutines are launched from one coroutine on the executor, so the first ones are already
 * sleeping while the last ones are launched; 1M delays within about 0.1 s overload two cores, so
 * lateness here is mostly queueing behind other resumptions, for every executor alike.
 */
class DelayStorm(val coroutines: Int = 100_000, val delaysEach: Int = 10) {
    class Result(val wallNanos: Long, val cpuNanos: Long, val p50LatenessNanos: Long, val p99LatenessNanos: Long, val maxLatenessNanos: Long)

    private val delays = IntArray(coroutines * delaysEach).also { a ->
        val rnd = java.util.SplittableRandom(7)
        for (i in a.indices) a[i] = 1 + rnd.nextInt(10)
    }
    private val lateness = LongArray(delays.size)

    fun run(ex: ExecutorUnderTest): Result {
        val os = ManagementFactory.getOperatingSystemMXBean() as com.sun.management.OperatingSystemMXBean
        lateness.fill(Long.MIN_VALUE)
        val each = delaysEach
        val cpu0 = os.processCpuTime
        val t0 = System.nanoTime()
        runBlocking {
            withContext(ex.dispatcher) {
                for (c in 0 until coroutines) {
                    launch {
                        val base = c * each
                        for (i in base until base + each) {
                            val d = delays[i]
                            val start = System.nanoTime()
                            delay(d.toLong())
                            lateness[i] = System.nanoTime() - start - d * 1_000_000L
                        }
                    }
                }
            }
        }
        val wall = System.nanoTime() - t0
        val cpu = os.processCpuTime - cpu0
        val missing = lateness.count { it == Long.MIN_VALUE }
        if (missing != 0) throw WrongResult("delay storm: $missing of ${lateness.size} delays not recorded")
        val early = lateness.count { it < 0 }
        if (early != 0) throw WrongResult("delay storm: $early delays returned early (by up to ${-lateness.min()} ns)")
        val sorted = lateness.copyOf()
        val p50 = percentile(sorted, 0.50)
        val p99 = percentile(sorted, 0.99)
        return Result(wall, cpu, p50, p99, sorted.last())
    }
}

/**
 * [count] Java `schedule(task, d, MILLISECONDS)` calls with d pseudo-random in 0..[maxDelayMillis]
 * (fixed seed), submitted by the calling thread, outside the pool; then a wait until all have
 * run. Each task records its lateness (when it ran minus when it was due: the submit time plus
 * its delay) and counts one completion (a task run twice is a wrong result, as is one run
 * early). The tasks are preallocated; the executor's own future per call is its cost.
 * Executors: ours (`pool.executor`), `ScheduledThreadPoolExecutor`, `ForkJoinPool` on JDK 25.
 */
class ScheduleFlood(val count: Int = 1_000_000, val maxDelayMillis: Int = 10) {
    class Result(val submitNanos: Long, val totalNanos: Long, val p50LatenessNanos: Long, val p99LatenessNanos: Long)

    private val delayMillis = IntArray(count).also { a ->
        val rnd = java.util.SplittableRandom(11)
        for (i in a.indices) a[i] = rnd.nextInt(maxDelayMillis + 1)
    }
    private val due = LongArray(count)
    private val lateness = LongArray(count)
    @Volatile private var completion = Completion(0)
    private val tasks = Array(count) { i ->
        Runnable {
            lateness[i] = System.nanoTime() - due[i]
            completion.complete()
        }
    }

    fun run(ex: ExecutorUnderTest): Result {
        val scheduler = ex.scheduler ?: throw IllegalArgumentException("${ex.id} is not a ScheduledExecutorService on this JDK")
        val c = Completion(count)
        completion = c
        val t0 = System.nanoTime()
        for (i in 0 until count) {
            val d = delayMillis[i]
            due[i] = System.nanoTime() + d * 1_000_000L
            scheduler.schedule(tasks[i], d.toLong(), TimeUnit.MILLISECONDS)
        }
        val t1 = System.nanoTime()
        c.await("schedule flood of $count")
        val t2 = System.nanoTime()
        val early = lateness.count { it < 0 }
        if (early != 0) throw WrongResult("schedule flood: $early tasks ran before they were due")
        val sorted = lateness.copyOf()
        return Result(t1 - t0, t2 - t0, percentile(sorted, 0.50), percentile(sorted, 0.99))
    }
}
