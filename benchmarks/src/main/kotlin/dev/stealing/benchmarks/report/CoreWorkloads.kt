package dev.stealing.benchmarks.report

import dev.stealing.benchmarks.DelayStorm
import dev.stealing.benchmarks.DispatchDrain
import dev.stealing.benchmarks.ExecutorUnderTest
import dev.stealing.benchmarks.FanOut
import dev.stealing.benchmarks.Fib
import dev.stealing.benchmarks.MergeSort
import dev.stealing.benchmarks.NoopFlood
import dev.stealing.benchmarks.PingPong
import dev.stealing.benchmarks.Queens
import dev.stealing.benchmarks.ScheduleFlood
import dev.stealing.benchmarks.WithTimeoutCalls
import dev.stealing.benchmarks.YieldStorm
import dev.stealing.benchmarks.report.Report.Companion.FORK_JOIN_REPEATS
import java.lang.management.ManagementFactory

/*
 * The rows of the report: what a row is ([Metric], [Workload]) and the catalogue of the core
 * rows ([CoreWorkloads]: the pool-instance spread, the floods, fib, merge sort, N-Queens,
 * ping-pong, the yield storm, the allocation per task and the timers), each with its metrics,
 * executors, the run that measures it and its note. The other families of rows have objects of
 * their own (MessagePassingWorkloads, LoopWorkloads, JavaForkJoinWorkloads,
 * CompletableFutureWorkloads); [Report] runs them all.
 */

/** One measured quantity of a workload (a table row per executor). */
class Metric(
    val id: String,
    val title: String,
    /** Unit of the stored values, e.g. "ms". */
    val unit: String,
    /** Short label for the chart. */
    val label: String,
)

/**
 * A workload of the report: runs once on one executor and returns the value of each of its
 * metrics (throwing on a wrong result). [extra] optionally returns a non-timed figure (e.g.
 * fairness) to print beside the table.
 */
class Workload(
    val id: String,
    val metrics: List<Metric>,
    val executors: List<String>,
    val run: (ExecutorUnderTest) -> Map<String, Double>,
    /** Figures that are not times (no ratios, no chart), printed in their own section. */
    val extras: List<Metric> = emptyList(),
    /** A line printed under the table (and in `report.md`) when this workload ran, or null. */
    val note: String? = null,
    /**
     * Non-null for a workload that creates its own executors instead of using the shared ones:
     * it runs once, after the rounds, and returns (metric id, executor id) -> values; [run] is
     * then not called.
     */
    val ownPools: (() -> Map<Pair<String, String>, List<Double>>)? = null,
)

/**
 * The report's core rows, in the order of the table. An instance keeps the large inputs that
 * the rows share from run to run (the merge sort's arrays, the delay and schedule floods'
 * preallocated tasks), created at their first run.
 */
class CoreWorkloads(private val options: Options) {
    private val all = ExecutorUnderTest.EXECUTORS
    private val fibN = 27
    private val queensN = 12
    private val pingPongTrips = 10_000
    private val allocBatch = 1_000_000
    private var mergeSort: MergeSort? = null
    private val timeoutCalls = 1_000_000
    private var delayStorm: DelayStorm? = null
    private var scheduleFlood: ScheduleFlood? = null

    /** Executors of the coroutine timer workloads; `fjp` has its own timers on JDK 25 only. */
    private val timerCoroutineExecutors = listOf("stealing", "default", "fjp")

    /** Executors of the Java `schedule` workload: `fjp` only where ForkJoinPool has `schedule` (JDK 25+). */
    private val schedulers = listOf("stealing", "stpe") + if (ExecutorUnderTest.forkJoinPoolSchedules) listOf("fjp") else emptyList()

    private val fjpTimers = if (ExecutorUnderTest.forkJoinPoolSchedules) {
        "fjp's timers are its own (`ForkJoinPool` is a `ScheduledExecutorService` on this JDK)"
    } else {
        "fjp's timers are kotlinx's `DefaultExecutor` thread (`ForkJoinPool` has no `schedule` before JDK 25)"
    }

    private fun ms(nanos: Long) = nanos / 1e6

    private fun timed(block: () -> Unit): Double {
        val t0 = System.nanoTime()
        block()
        return ms(System.nanoTime() - t0)
    }
    /** The rows, pool-spread first; [Report.workloads] adds the other families and applies `--only`. */
    fun workloads(): List<Workload> = listOf(
        PoolSpread(options).workload(),
        Workload(
            "noop-separated",
            listOf(
                Metric("noop-sep-queue", "1M no-op Runnables, separated: queue", "ms", "1M q sep"),
                Metric("noop-sep-drain", "1M no-op Runnables, separated: drain", "ms", "1M d sep"),
                Metric("noop-sep-total", "1M no-op Runnables, separated: total", "ms", "1M tot sep"),
            ),
            all,
            { ex ->
                val (q, d) = NoopFlood(ex.executor).run(separated = true)
                mapOf("noop-sep-queue" to ms(q), "noop-sep-drain" to ms(d), "noop-sep-total" to ms(q + d))
            },
        ),
        Workload(
            "noop-overlapped",
            listOf(Metric("noop-ovl-total", "1M no-op Runnables, overlapped: total", "ms", "1M tot ovl")),
            all,
            { ex ->
                val (q, d) = NoopFlood(ex.executor).run(separated = false)
                mapOf("noop-ovl-total" to ms(q + d))
            },
        ),
        Workload(
            "fanout-10000x100",
            listOf(Metric("fanout-10000x100", "fan-out 10,000 x 100", "ms", "fan 10k x100")),
            all,
            { ex -> mapOf("fanout-10000x100" to timed { FanOut(ex.executor, 10_000, 100).run() }) },
        ),
        Workload(
            "fanout-100x10000",
            listOf(Metric("fanout-100x10000", "fan-out 100 x 10,000", "ms", "fan 100 x10k")),
            all,
            { ex -> mapOf("fanout-100x10000" to timed { FanOut(ex.executor, 100, 10_000).run() }) },
        ),
        Workload(
            "fib-coroutines",
            listOf(Metric("fib-coroutines", "fib($fibN), async per node (await / awaitInline / forkJoin)", "ms", "fib async")),
            listOf("stealing", "stealing-inline", "stealing-forkjoin", "default", "fjp"),
            { ex -> mapOf("fib-coroutines" to timed { Fib.coroutines(ex, fibN) }) },
        ),
        Workload(
            "fib-forkjoin",
            listOf(Metric("fib-forkjoin", "fib($fibN), fork/join (ForkedTask / RecursiveTask)", "ms", "fib f/j")),
            listOf("stealing", "fjp"),
            // A few ms each: time FORK_JOIN_REPEATS of them in a row per run and report the mean, so one
            // run is long enough for the timer and less at the mercy of a single preemption.
            { ex -> mapOf("fib-forkjoin" to timed { repeat(FORK_JOIN_REPEATS) { Fib.forkJoin(ex, fibN) } } / FORK_JOIN_REPEATS) },
        ),
        Workload(
            "merge-sort",
            listOf(Metric("merge-sort", "merge sort 10M ints, cut-off 8192", "ms", "sort 10M")),
            listOf("stealing-inline", "stealing-forkjoin", "default", "fjp"),
            { ex ->
                val sort = mergeSort ?: MergeSort().also { mergeSort = it }
                sort.reset()
                val t = timed { sort.sort(ex) }
                sort.check()
                mapOf("merge-sort" to t)
            },
        ),
        Workload(
            "queens",
            listOf(Metric("queens", "N-Queens($queensN), a fork per candidate square", "ms", "queens")),
            listOf("stealing", "stealing-inline", "stealing-forkjoin", "default"),
            { ex -> mapOf("queens" to timed { Queens.run(ex, queensN) }) },
        ),
        Workload(
            "ping-pong-pool",
            listOf(Metric("ping-pong-pool", "ping-pong, both on the pool (per round trip)", "µs", "ping-pong pool")),
            all,
            { ex -> mapOf("ping-pong-pool" to timed { PingPong.run(ex, pingPongTrips, fromCaller = false) } * 1000 / pingPongTrips) },
        ),
        Workload(
            "ping-pong-caller",
            listOf(Metric("ping-pong-caller", "ping-pong, caller <-> pool (per round trip)", "µs", "ping-pong caller")),
            all,
            { ex -> mapOf("ping-pong-caller" to timed { PingPong.run(ex, pingPongTrips, fromCaller = true) } * 1000 / pingPongTrips) },
        ),
        Workload(
            "yield-storm",
            listOf(Metric("yield-storm", "1,000 coroutines x 100 yields", "ms", "yield")),
            all,
            { ex ->
                var fairness = 0.0
                val t = timed { fairness = YieldStorm.run(ex, 1_000, 100) }
                mapOf("yield-storm" to t, "yield-fairness" to fairness)
            },
            extras = listOf(
                Metric(
                    "yield-fairness",
                    "yield fairness: least progress of any coroutine when the first one finishes (1 = round-robin)",
                    "", "fairness",
                ),
            ),
        ),
        Workload(
            "alloc",
            listOf(Metric("alloc", "allocation per dispatched Runnable (all threads)", "B", "alloc")),
            all,
            { ex ->
                val drain = DispatchDrain(ex.executor, allocBatch)
                val before = allocatedBytes()
                drain.run()
                val after = allocatedBytes()
                // Threads that died in between are left out; threads born in between count fully.
                val bytes = after.entries.sumOf { (tid, b) -> b - (before[tid] ?: 0L) }
                mapOf("alloc" to bytes.toDouble() / allocBatch)
            },
        ),
        Workload(
            "timer-timeout",
            listOf(Metric("timer-timeout", "withTimeout(10 s) { ~0.1 us step }, 1M calls (wall time per call)", "ns", "withTimeout")),
            timerCoroutineExecutors,
            { ex ->
                val t = timed { WithTimeoutCalls.run(ex, timeoutCalls, options.parallelism) }
                mapOf("timer-timeout" to t * 1e6 / timeoutCalls)
            },
            note = "timer-timeout: ${options.parallelism} coroutines share the 1M calls; Default's timers are kotlinx's `DefaultExecutor` thread, $fjpTimers.",
        ),
        Workload(
            "timer-timeout-control",
            listOf(Metric("timer-timeout-control", "control: coroutineScope { same step }, no timer, 1M calls (per call)", "ns", "scope (control)")),
            timerCoroutineExecutors,
            { ex ->
                val t = timed { WithTimeoutCalls.run(ex, timeoutCalls, options.parallelism, timeout = false) }
                mapOf("timer-timeout-control" to t * 1e6 / timeoutCalls)
            },
            note = "timer-timeout-control: the same loop with `coroutineScope` instead of `withTimeout` (no timer): timer-timeout minus this is about what the timer costs per call on each executor.",
        ),
        Workload(
            "timer-delay",
            listOf(
                Metric("timer-delay-wall", "100k coroutines x 10 delay(1-10 ms): wall time", "ms", "delay wall"),
                Metric("timer-delay-p99", "100k coroutines x 10 delay(1-10 ms): p99 lateness", "ms", "delay p99 late"),
                Metric("timer-delay-cpu", "100k coroutines x 10 delay(1-10 ms): process CPU", "ms", "delay CPU"),
            ),
            timerCoroutineExecutors,
            { ex ->
                val storm = delayStorm ?: DelayStorm().also { delayStorm = it }
                val r = storm.run(ex)
                mapOf(
                    "timer-delay-wall" to ms(r.wallNanos),
                    "timer-delay-p99" to ms(r.p99LatenessNanos),
                    "timer-delay-cpu" to ms(r.cpuNanos),
                    "timer-delay-p50" to ms(r.p50LatenessNanos),
                )
            },
            extras = listOf(Metric("timer-delay-p50", "delay storm: median lateness, ms", "ms", "delay p50 late")),
            note = "timer-delay: lateness = time slept minus time asked, per delay (1M of them); CPU = the whole process's (all threads); $fjpTimers.",
        ),
        Workload(
            "timer-schedule",
            listOf(
                Metric("timer-schedule-submit", "1M schedule(task, 0-10 ms) from one thread: submitting", "ms", "sched submit"),
                Metric("timer-schedule-p99", "1M schedule(task, 0-10 ms): p99 lateness", "ms", "sched p99 late"),
                Metric("timer-schedule-total", "1M schedule(task, 0-10 ms): first submit to all run", "ms", "sched 1M"),
            ),
            schedulers,
            { ex ->
                val flood = scheduleFlood ?: ScheduleFlood().also { scheduleFlood = it }
                val r = flood.run(ex)
                mapOf(
                    "timer-schedule-submit" to ms(r.submitNanos),
                    "timer-schedule-p99" to ms(r.p99LatenessNanos),
                    "timer-schedule-total" to ms(r.totalNanos),
                    "timer-schedule-p50" to ms(r.p50LatenessNanos),
                )
            },
            extras = listOf(Metric("timer-schedule-p50", "schedule flood: median lateness, ms", "ms", "sched p50 late")),
            note = "timer-schedule: stealing = `pool.executor`, stpe = `ScheduledThreadPoolExecutor(${options.parallelism})`" +
                (if (ExecutorUnderTest.forkJoinPoolSchedules) ", fjp = `ForkJoinPool(${options.parallelism}).schedule`" else "; no fjp row: `ForkJoinPool` has no `schedule` before JDK 25") +
                "; throughput target as time: >= 2x STPE's throughput = <= 0.5 x its time.",
        ),
    )

    /** Bytes allocated so far by each live thread. */
    private fun allocatedBytes(): Map<Long, Long> {
        val mx = ManagementFactory.getThreadMXBean() as com.sun.management.ThreadMXBean
        val ids = mx.allThreadIds
        val bytes = mx.getThreadAllocatedBytes(ids)
        return ids.indices.filter { bytes[it] >= 0 }.associate { ids[it] to bytes[it] }
    }
}
