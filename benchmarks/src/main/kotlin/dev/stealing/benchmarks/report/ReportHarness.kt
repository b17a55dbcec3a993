package dev.stealing.benchmarks.report

import dev.stealing.benchmarks.ExecutorUnderTest
import dev.stealing.benchmarks.FanOut
import java.lang.management.ManagementFactory
import java.util.concurrent.ExecutionException
import java.util.concurrent.ExecutorService
import java.util.concurrent.Executors
import java.util.concurrent.TimeUnit
import java.util.concurrent.TimeoutException

/**
 * The report's harness: runs the rows ([workloads]) on every executor in rounds, warm-up rounds
 * first, the executor order rotated from round to round; times each run on a driver thread
 * outside every pool and records a wrong result, an exception or a hang as a failure; runs the
 * rows with their own pools after the rounds, measures idle CPU, and hands the samples to
 * [ReportOutput] (or, in a child JVM of [MultiJvmReport], writes them to a file).
 */
class Report(private val options: Options) {
    /** The workloads this run measures (after `--only`). */
    val workloads: List<Workload> = CoreWorkloads(options).workloads()
        .plus(MessagePassingWorkloads.workloads()).plus(LoopWorkloads.workloads()).plus(JavaForkJoinWorkloads.workloads())
        .plus(CompletableFutureWorkloads.workloads()).plus(PekkoWorkloads(options).workloads())
        .plus(ChannelWorkloads(options).workloads()).filter { options.only == null || options.only.containsMatchIn(it.id) }

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
        val total = options.warmupRounds + options.rounds
        val progress = Progress(
            total * workloads.filter { it.ownPools == null }.sumOf { it.executors.size } + workloads.count { it.ownPools != null },
            System.getenv(MultiJvmReport.JVM_LABEL_ENV),
        )
        try {
            for (round in 0 until total) {
                val warm = round < options.warmupRounds
                val tag = if (warm) "warm-up ${round + 1}/${options.warmupRounds}" else "round ${round - options.warmupRounds + 1}/${options.rounds}"
                for (w in workloads) {
                    if (w.ownPools != null) continue
                    val order = rotate(w.executors, round)
                    System.gc()
                    val line = StringBuilder("[$tag] ${w.id.padEnd(18)}")
                    for (id in order) {
                        progress.starting(tag, w.id, id)
                        try {
                            if (id in broken) { line.append("  $id: skipped"); continue }
                            Thread.sleep(SETTLE_MILLIS)
                            val result = if (warm) warmUp(w, subjects.getValue(id), tag) else runOne(w, subjects.getValue(id), tag)
                            if (result == null) { line.append("  $id: FAILED"); continue }
                            val first = w.metrics.last()
                            line.append("  $id ${fmt(result.getValue(first.id))} ${first.unit}")
                            if (!warm) for ((metric, v) in result) samples.getOrPut(metric to id) { ArrayList() }.add(v)
                        } finally {
                            progress.finished()
                        }
                    }
                    progress.clearLine()
                    println("${progress.summary()} $line")
                }
            }
            for (w in workloads) {
                val measure = w.ownPools ?: continue
                System.gc()
                progress.clearLine()
                println("${progress.summary()} [own pools] ${w.id} ...")
                progress.starting("own pools", w.id, "its pools")
                val result = try { runOwnPools(w.id, measure) } finally { progress.finished(); progress.clearLine() } ?: continue
                for ((key, values) in result) samples.getOrPut(key) { ArrayList() }.addAll(values)
                println("${progress.summary()} [own pools] ${w.id}: " + result.entries.joinToString("; ") { (k, v) -> "${k.second} ${v.joinToString(" ") { fmt(it) }}" })
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

        /** [list] rotated left by [by] (the order of the executors, or pools, in a round). */
        internal fun <T> rotate(list: List<T>, by: Int): List<T> {
            val k = by % list.size
            return list.drop(k) + list.take(k)
        }
    }
}
