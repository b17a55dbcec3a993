package dev.stealing.benchmarks.report

import dev.stealing.benchmarks.DelayStorm
import dev.stealing.benchmarks.DispatchDrain
import dev.stealing.benchmarks.ExecutorUnderTest
import dev.stealing.StealingDispatcher
import dev.stealing.benchmarks.FanOut
import dev.stealing.benchmarks.InPoolSubmit
import dev.stealing.benchmarks.Fib
import dev.stealing.benchmarks.MergeSort
import dev.stealing.benchmarks.Queens
import dev.stealing.benchmarks.NoopFlood
import dev.stealing.benchmarks.PingPong
import dev.stealing.benchmarks.ScheduleFlood
import dev.stealing.benchmarks.WithTimeoutCalls
import dev.stealing.benchmarks.YieldStorm
import java.io.File
import java.lang.management.ManagementFactory
import java.util.concurrent.ExecutionException
import java.util.concurrent.ExecutorService
import java.util.concurrent.Executor
import java.util.concurrent.Executors
import java.util.concurrent.ForkJoinPool
import java.util.concurrent.TimeUnit
import java.util.concurrent.TimeoutException
import kotlin.system.exitProcess

/**
 * The comparison report: a short run of the key workloads (the same code as the JMH suite, from
 * `Workloads.kt`) on every executor, then a table of medians, spreads and ratios to
 * `Dispatchers.Default` and to `ForkJoinPool`, with the performance targets marked.
 *
 * ```
 * java -cp benchmarks/target/benchmarks.jar dev.stealing.benchmarks.report.ReportKt [--quick]
 * ```
 *
 * Method: every executor is created once and closed at the end. Rounds alternate the executors:
 * in each round every workload runs once on every executor, in an order rotated from round to
 * round, so drift of the machine (another build, thermal, GC state) hits all executors alike.
 * The first rounds are warm-up and are not counted; in each of them a workload is repeated on an
 * executor until at least half a second has passed, so that short workloads are warmed up too.
 * Before each workload's batch the heap is collected; between two runs the harness pauses
 * briefly so the previous pool's threads have parked and do not compete with the next one. Each run is timed with `System.nanoTime` on a
 * driver thread outside every pool and checked; a wrong result, an exception, or a run that
 * does not finish within the time limit is a failure: the report still gets written, and the
 * exit code is 1.
 *
 * Options: `--quick` (1 warm-up + 3 measured rounds, 3 s idle window), `--warmup N`,
 * `--rounds N`, `--idle-seconds N`, `--only REGEX` (workload ids), `--parallelism N` (threads of
 * every pool we create; `Dispatchers.Default` keeps its own; default: the available processors),
 * `--out DIR` (default `benchmarks/target/report`, or `target/report` when run inside
 * `benchmarks/`, so a run leaves the tracked files alone), `--update-committed` (write to
 * `benchmarks/results` instead, the copy the READMEs show and link),
 * `--jvms N` (default 1: run the whole report in N fresh JVMs one after another and pool their
 * measured rounds; see [MultiJvmReport]).
 */
fun main(args: Array<String>) {
    val options = try {
        Options.parse(args)
    } catch (e: IllegalArgumentException) {
        System.err.println("report: ${e.message}")
        System.err.println(Options.USAGE)
        exitProcess(2)
    }
    val code = try {
        if (options.jvms > 1) MultiJvmReport(options, args).run() else Report(options).run()
    } catch (e: Throwable) {
        System.err.println("report: failed: $e")
        e.printStackTrace()
        1
    }
    exitProcess(code)
}

class Options(
    val quick: Boolean,
    val warmupRounds: Int,
    val rounds: Int,
    val idleSeconds: Int,
    val only: Regex?,
    /** Threads of every pool the report creates (not `Dispatchers.Default`, which is shared). */
    val parallelism: Int,
    val outDir: File,
    /** Whether [outDir] is the committed `benchmarks/results` (`--update-committed`). */
    val updateCommitted: Boolean,
    val runLimitSeconds: Long,
    /** Fresh JVMs to run the report in, one after another; their measured rounds are pooled. */
    val jvms: Int,
    /** Set by [MultiJvmReport] for its child JVMs: where to write the raw samples. */
    val samplesOut: File?,
) {
    companion object {
        /** Writes the report into the committed `benchmarks/results` rather than `target/report`. */
        const val UPDATE_COMMITTED = "--update-committed"

        const val USAGE = "usage: ReportKt [--quick] [--warmup N] [--rounds N] [--idle-seconds N] [--only REGEX] [--parallelism N] [--out DIR | --update-committed] [--run-limit-seconds N] [--jvms N]"

        fun parse(args: Array<String>): Options {
            var quick = false
            var warmup: Int? = null
            var rounds: Int? = null
            var idle: Int? = null
            var only: Regex? = null
            var parallelism = ExecutorUnderTest.CORES
            var out: File? = null
            var updateCommitted = false
            var limit = 120L
            var jvms = 1
            var samplesOut: File? = null
            var i = 0
            fun value(name: String): String = args.getOrNull(++i) ?: throw IllegalArgumentException("$name needs a value")
            fun int(name: String, min: Int): Int {
                val v = value(name)
                val n = v.toIntOrNull() ?: throw IllegalArgumentException("$name must be an integer, was '$v'")
                require(n >= min) { "$name must be >= $min, was $n" }
                return n
            }
            while (i < args.size) {
                when (val a = args[i]) {
                    "--quick" -> quick = true
                    "--warmup" -> warmup = int(a, 0)
                    "--rounds" -> rounds = int(a, 1)
                    "--idle-seconds" -> idle = int(a, 0)
                    "--only" -> only = Regex(value(a))
                    "--parallelism" -> parallelism = int(a, 1)
                    "--out" -> out = File(value(a))
                    UPDATE_COMMITTED -> updateCommitted = true
                    "--run-limit-seconds" -> limit = int(a, 1).toLong()
                    "--jvms" -> jvms = int(a, 1)
                    MultiJvmReport.SAMPLES_OUT -> samplesOut = File(value(a))
                    "-h", "--help" -> { println(USAGE); exitProcess(0) }
                    else -> throw IllegalArgumentException("unknown argument '$a'")
                }
                i++
            }
            require(out == null || !updateCommitted) { "--out and $UPDATE_COMMITTED exclude each other" }
            // From the repository root or from inside benchmarks/.
            val benchmarks = if (File("benchmarks").isDirectory) File("benchmarks") else File(".")
            val defaultOut = if (updateCommitted) File(benchmarks, "results") else File(benchmarks, "target/report")
            return Options(
                quick = quick,
                warmupRounds = warmup ?: if (quick) 1 else 2,
                rounds = rounds ?: if (quick) 3 else 7,
                idleSeconds = idle ?: if (quick) 3 else 10,
                only = only,
                parallelism = parallelism,
                outDir = (out ?: defaultOut).normalize(),
                updateCommitted = updateCommitted,
                runLimitSeconds = limit,
                jvms = jvms,
                samplesOut = samplesOut,
            )
        }
    }
}

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

class Report(private val options: Options) {
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

    /** The workloads this run measures (after `--only`). */
    val workloads: List<Workload> = listOf(
        Workload(
            "pool-spread",
            listOf(
                Metric(
                    "pool-spread",
                    "pool-instance spread: 10,000 no-op Runnables submitted inside the pool, best of ${spreadBursts()} bursts per pool (per task)",
                    "ns", "pool spread",
                ),
                Metric(
                    "pool-spread-median",
                    "pool-instance spread: the same bursts, each pool's median burst (per task)",
                    "ns", "pool spread (median)",
                ),
            ),
            listOf("stealing", "fjp"),
            { error("pool-spread creates its own pools") },
            note = "pool-spread: $SPREAD_OURS pools of ours and $SPREAD_FJP ForkJoinPools created one after another in each JVM, " +
                "all alive while measured, bursts alternated between them; one value per pool (its best burst, and in the " +
                "second row its median burst); min - max = fastest - slowest pool, target (best bursts): slowest <= " +
                "$SPREAD_LIMIT x fastest and median <= 1.0 x FJP. A burst is fast when the second worker joins it late " +
                "or not at all (both workers decrement one shared counter), so the best of a pool's bursts measures how " +
                "late a wake-up can be rather than the pool; the median burst is the typical speed (docs/investigations/2026-11-27-what-the-best-burst-measures.md).",
            ownPools = ::poolSpread,
        ),
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
    ).plus(MessagePassingWorkloads.workloads()).plus(LoopWorkloads.workloads()).plus(JavaForkJoinWorkloads.workloads())
        .plus(CompletableFutureWorkloads.workloads()).filter { options.only == null || options.only.containsMatchIn(it.id) }

    private val samples = LinkedHashMap<Pair<String, String>, MutableList<Double>>()
    private val failures = ArrayList<String>()
    private val broken = HashSet<String>()
    private var driver: ExecutorService = newDriver()

    private fun newDriver(): ExecutorService =
        Executors.newSingleThreadExecutor { r -> Thread(r, "report-driver").apply { isDaemon = true } }

    fun run(): Int {
        require(workloads.isNotEmpty()) { "--only ${options.only} matches no workload" }
        val ids = ExecutorUnderTest.ALL.filter { id -> workloads.any { it.ownPools == null && id in it.executors } }
        val started = System.currentTimeMillis()
        println("Stealing Dispatcher comparison report: ${if (options.quick) "quick" else "full"} mode, " +
            "${options.warmupRounds} warm-up + ${options.rounds} measured rounds, parallelism ${options.parallelism}, " +
            "executors ${ids.joinToString()}")
        val subjects = ids.associateWith { ExecutorUnderTest.create(it, options.parallelism) }
        var idle: Map<String, Double> = emptyMap()
        try {
            val total = options.warmupRounds + options.rounds
            for (round in 0 until total) {
                val warm = round < options.warmupRounds
                val tag = if (warm) "warm-up ${round + 1}/${options.warmupRounds}" else "round ${round - options.warmupRounds + 1}/${options.rounds}"
                for (w in workloads) {
                    if (w.ownPools != null) continue
                    val order = rotate(w.executors, round)
                    System.gc()
                    val line = StringBuilder("[$tag] ${w.id.padEnd(18)}")
                    for (id in order) {
                        if (id in broken) { line.append("  $id: skipped"); continue }
                        Thread.sleep(SETTLE_MILLIS)
                        val result = if (warm) warmUp(w, subjects.getValue(id), tag) else runOne(w, subjects.getValue(id), tag)
                        if (result == null) { line.append("  $id: FAILED"); continue }
                        val first = w.metrics.last()
                        line.append("  $id ${fmt(result.getValue(first.id))} ${first.unit}")
                        if (!warm) for ((metric, v) in result) samples.getOrPut(metric to id) { ArrayList() }.add(v)
                    }
                    println(line)
                }
            }
            for (w in workloads) {
                val measure = w.ownPools ?: continue
                System.gc()
                println("[own pools] ${w.id} ...")
                val result = runOwnPools(w.id, measure) ?: continue
                for ((key, values) in result) samples.getOrPut(key) { ArrayList() }.addAll(values)
                println("[own pools] ${w.id}: " + result.entries.joinToString("; ") { (k, v) -> "${k.second} ${v.joinToString(" ") { fmt(it) }}" })
            }
            if (options.idleSeconds > 0 && options.only == null) idle = measureIdle(subjects)
        } finally {
            for (s in subjects.values) {
                if (s.id in broken) continue // its threads may be stuck; the JVM exits anyway
                try { s.close() } catch (e: Throwable) { failures += "closing ${s.id}: $e" }
            }
        }
        val elapsed = (System.currentTimeMillis() - started) / 1000.0
        options.samplesOut?.let { MultiJvmReport.writeSamples(it, samples, idle, failures) }
        val output = ReportOutput(options, workloads, samples, idle, failures, elapsed)
        output.printAndWrite()
        if (failures.isNotEmpty()) {
            System.err.println("${failures.size} failure(s):")
            failures.forEach { System.err.println("  $it") }
            return 1
        }
        return 0
    }

    /** Runs a workload with its own pools on the driver thread; null (and a failure recorded) if it failed. */
    private fun runOwnPools(id: String, measure: () -> Map<Pair<String, String>, List<Double>>): Map<Pair<String, String>, List<Double>>? {
        val future = driver.submit<Map<Pair<String, String>, List<Double>>> { measure() }
        try {
            return future.get(options.runLimitSeconds, TimeUnit.SECONDS)
        } catch (e: TimeoutException) {
            failures += "$id: no result within ${options.runLimitSeconds} s (hung?)"
            future.cancel(true)
            driver = newDriver()
        } catch (e: ExecutionException) {
            val cause = e.cause ?: e
            failures += "$id: $cause"
            cause.printStackTrace()
        }
        return null
    }

    private fun spreadBursts(): Int = if (options.quick) 40 else 100

    /** A pool of the spread workload: its executor and how to close it. */
    private class SpreadPool(val id: String, val executor: Executor, val close: () -> Unit)

    private fun spreadPool(id: String, k: Int): SpreadPool = when (id) {
        "stealing" -> StealingDispatcher(options.parallelism, "spread-$k").let { SpreadPool(id, it.executor) { it.close() } }
        else -> ForkJoinPool(options.parallelism).let { p ->
            SpreadPool(id, p) {
                p.shutdown()
                check(p.awaitTermination(1, TimeUnit.MINUTES)) { "$p did not terminate within a minute" }
            }
        }
    }

    /**
     * The pool-instance spread: whether every pool of ours runs as fast as every other. The
     * compiled code is shared by all pools of a JVM, so a pool that stays slower than its
     * siblings is slowed by something of its own (where its objects sit in memory, its threads).
     * First one pool of each kind is warmed up (and closed), then [SPREAD_OURS] pools of ours and
     * [SPREAD_FJP] ForkJoinPools are created one after another and kept; blocks of
     * [SPREAD_BLOCK] bursts ([InPoolSubmit]) alternate between them. Each pool gives two values,
     * in ns per task, in the order the pools were created: its best burst (what the spread target
     * is set on) and its median burst (the typical speed: the best is usually a burst the second
     * worker joined late; docs/investigations/2026-11-27-what-the-best-burst-measures.md).
     */
    private fun poolSpread(): Map<Pair<String, String>, List<Double>> {
        val kinds = listOf("stealing", "fjp")
        for (id in kinds) {
            val p = spreadPool(id, 0)
            try {
                val w = InPoolSubmit(p.executor)
                val start = System.nanoTime()
                while (System.nanoTime() - start < (if (options.quick) 1 else 2) * WARMUP_MIN_MILLIS * 1_000_000) w.run()
            } finally {
                p.close()
            }
        }
        val pools = (1..SPREAD_OURS).map { spreadPool("stealing", it) } + (1..SPREAD_FJP).map { spreadPool("fjp", SPREAD_OURS + it) }
        try {
            val work = pools.map { InPoolSubmit(it.executor) }
            val bursts = pools.map { ArrayList<Double>() }
            val blocks = (spreadBursts() + SPREAD_BLOCK - 1) / SPREAD_BLOCK
            for (b in 0 until blocks) {
                for (j in rotate(pools.indices.toList(), b)) {
                    Thread.sleep(SETTLE_MILLIS)
                    repeat(SPREAD_BLOCK) { bursts[j].add(work[j].run()) }
                }
            }
            return kinds.flatMap { id ->
                val mine = pools.indices.filter { pools[it].id == id }
                listOf(
                    ("pool-spread" to id) to mine.map { bursts[it].min() },
                    ("pool-spread-median" to id) to mine.map { ReportOutput.median(bursts[it]) },
                )
            }.toMap()
        } finally {
            pools.forEach { it.close() }
        }
    }

    /**
     * A warm-up round: runs [w] on [ex] again and again until [WARMUP_MIN_MILLIS] have passed, so
     * that a workload of a few milliseconds gets as much JIT warm-up as a long one; returns the
     * last run's result, or null at the first failure.
     */
    private fun warmUp(w: Workload, ex: ExecutorUnderTest, tag: String): Map<String, Double>? {
        val start = System.nanoTime()
        while (true) {
            val result = runOne(w, ex, tag) ?: return null
            if (System.nanoTime() - start >= WARMUP_MIN_MILLIS * 1_000_000) return result
        }
    }

    /** Runs [w] once on [ex] on the driver thread; null (and a failure recorded) if it failed. */
    private fun runOne(w: Workload, ex: ExecutorUnderTest, tag: String): Map<String, Double>? {
        val future = driver.submit<Map<String, Double>> { w.run(ex) }
        try {
            return future.get(options.runLimitSeconds, TimeUnit.SECONDS)
        } catch (e: TimeoutException) {
            failures += "[$tag] ${w.id} on ${ex.id}: no result within ${options.runLimitSeconds} s (hung?); ${ex.id} skipped from now on"
            broken += ex.id
            future.cancel(true)
            driver = newDriver() // the old driver thread may be stuck for good
        } catch (e: ExecutionException) {
            val cause = e.cause ?: e
            failures += "[$tag] ${w.id} on ${ex.id}: $cause"
            cause.printStackTrace()
        }
        return null
    }

    /**
     * Idle CPU after a burst: each executor runs a short fan-out, then the CPU time of its own
     * threads is summed over the next [Options.idleSeconds] (all windows overlap, so this costs
     * one window, not one per executor). Returns percent of one core, per executor. A pool
     * whose threads cannot be found by name is a failure of the harness, not a 0.
     */
    private fun measureIdle(subjects: Map<String, ExecutorUnderTest>): Map<String, Double> {
        println("idle check: a burst on each executor, then ${options.idleSeconds} s of idle CPU per pool ...")
        val live = subjects.values.filter { it.id !in broken }
        val start = HashMap<String, Pair<Long, Map<Long, Long>>>()
        for (s in live) {
            try {
                FanOut(s.executor, 1_000, 100).run()
            } catch (e: Throwable) {
                failures += "idle check burst on ${s.id}: $e"
                continue
            }
            start[s.id] = System.nanoTime() to threadCpu(s.threadNamePrefix)
        }
        Thread.sleep(options.idleSeconds * 1000L)
        val end = System.nanoTime()
        return live.filter { it.id in start }.associate { s ->
            val (t0, cpu0) = start.getValue(s.id)
            val cpu1 = threadCpu(s.threadNamePrefix)
            if (cpu1.isEmpty()) failures += "idle check: no thread named ${s.threadNamePrefix}* found for ${s.id}"
            val used = cpu1.entries.sumOf { (tid, c) -> c - (cpu0[tid] ?: 0L) }
            s.id to 100.0 * used / (end - t0)
        }
    }

    private fun threadCpu(prefix: String): Map<Long, Long> {
        val mx = ManagementFactory.getThreadMXBean()
        return Thread.getAllStackTraces().keys.filter { it.name.startsWith(prefix) }
            .associate { it.id to mx.getThreadCpuTime(it.id) }
            .filterValues { it >= 0 }
    }

    /** Bytes allocated so far by each live thread. */
    private fun allocatedBytes(): Map<Long, Long> {
        val mx = ManagementFactory.getThreadMXBean() as com.sun.management.ThreadMXBean
        val ids = mx.allThreadIds
        val bytes = mx.getThreadAllocatedBytes(ids)
        return ids.indices.filter { bytes[it] >= 0 }.associate { ids[it] to bytes[it] }
    }

    private fun <T> rotate(list: List<T>, by: Int): List<T> {
        val k = by % list.size
        return list.drop(k) + list.take(k)
    }

    companion object {
        const val SETTLE_MILLIS = 20L
        /** Least time one warm-up round spends on each workload and executor (repeating short runs). */
        const val WARMUP_MIN_MILLIS = 500L
        const val FORK_JOIN_REPEATS = 10
        /** Pools of ours and ForkJoinPools created per JVM by the pool-instance spread. */
        const val SPREAD_OURS = 4
        const val SPREAD_FJP = 2
        /** Bursts a spread pool runs in a row before the next pool's turn. */
        const val SPREAD_BLOCK = 10
        /** Target: the slowest of our pools at most this many times the fastest. */
        const val SPREAD_LIMIT = 1.3

        fun fmt(v: Double): String = when {
            v >= 100 -> "%.0f".format(v)
            v >= 10 -> "%.1f".format(v)
            else -> "%.2f".format(v)
        }
    }
}
