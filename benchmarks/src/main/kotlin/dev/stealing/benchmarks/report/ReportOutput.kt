package dev.stealing.benchmarks.report

import dev.stealing.benchmarks.CompletableFutureShapes
import dev.stealing.benchmarks.ExecutorUnderTest
import dev.stealing.benchmarks.PekkoShapes
import org.knowm.xchart.BitmapEncoder
import org.knowm.xchart.CategoryChart
import org.knowm.xchart.CategoryChartBuilder
import org.knowm.xchart.style.Styler
import java.io.File
import java.lang.management.ManagementFactory
import java.time.ZonedDateTime
import java.time.format.DateTimeFormatter

/**
 * Turns the report's samples into the console table, `report.md` and the ratio chart
 * `report.png`, and judges the performance targets.
 */
class ReportOutput(
    private val options: Options,
    private val workloads: List<Workload>,
    /** (metric id, executor id) -> measured values, one per measured round. */
    private val samples: Map<Pair<String, String>, List<Double>>,
    /** Executor id -> idle CPU in percent of one core (empty if not measured). */
    private val idle: Map<String, Double>,
    private val failures: List<String>,
    private val elapsedSeconds: Double,
) {
    private class Row(
        val metric: Metric,
        val executor: String,
        val median: Double,
        val min: Double,
        val max: Double,
        val n: Int,
        val vsDefault: Double?,
        val vsFjp: Double?,
        val target: String,
    )

    private data class Verdict(val met: Boolean, val text: String)

    /** Filled while [rows] is built (declared first: initialisers run in order). */
    private val verdicts = LinkedHashMap<String, Verdict>()

    private fun median(metric: String, executor: String): Double? = samples[metric to executor]?.let(::median)

    private val rows: List<Row> = workloads.flatMap { w ->
        w.metrics.flatMap { m ->
            ExecutorUnderTest.ALL.filter { it in w.executors }.mapNotNull { ex ->
                val values = samples[m.id to ex] ?: return@mapNotNull null
                val med = median(values)
                Row(
                    m, ex, med, values.min(), values.max(), values.size,
                    ratio(med, median(m.id, "default")), ratio(med, median(m.id, "fjp")),
                    target(m.id, ex),
                )
            }
        }
    }

    private fun ratio(a: Double, b: Double?): Double? = if (b == null || b == 0.0) null else a / b

    // ---- targets ---------------------------------------------------------------------------

    private fun target(metric: String, ex: String): String {
        val ours = median(metric, ex) ?: return ""
        if (metric == "pool-spread-median" && ex == "stealing") {
            val values = samples[metric to ex] ?: return ""
            return "no target: slowest %.2f x fastest of %d pools; %.2f x FJP".format(
                values.max() / values.min(), values.size, ratio(ours, median(metric, "fjp")) ?: Double.NaN,
            )
        }
        fun vs(peer: String, limit: Double, peerName: String): Verdict? {
            val r = ratio(ours, median(metric, peer)) ?: return null
            return Verdict(r <= limit, "<= %.2f x %s (%.2f)".format(limit, peerName, r))
        }
        if (MessagePassingWorkloads.isMessagePassing(metric) && ex == "stealing") {
            val best = MessagePassingWorkloads.PEERS.filter { median(metric, it) != null }.minByOrNull { median(metric, it)!! }
            val parts = listOfNotNull(vs("default", 1.0, "Default"), best?.let { vs(it, 1.1, "best peer, $it") })
            return verdictText(metric, ex, parts)
        }
        if (JavaForkJoinWorkloads.isJavaForkJoin(metric) && ex == "stealing") {
            return verdictText(metric, ex, listOfNotNull(vs("fjp", JavaForkJoinWorkloads.target(metric), "FJP")))
        }
        if (CompletableFutureWorkloads.isCompletableFuture(metric) && ex == "stealing") {
            val best = CompletableFutureShapes.PEERS.filter { median(metric, it) != null }.minByOrNull { median(metric, it)!! }
                ?: return ""
            val parts = listOfNotNull(
                vs(best, CompletableFutureWorkloads.FLOOR, "best peer, $best (floor)"),
                vs(best, CompletableFutureWorkloads.GOAL, "best peer, $best (goal)"),
            )
            return verdictText(metric, ex, parts)
        }
        if (PekkoWorkloads.isPekko(metric) && ex == "stealing") {
            val best = PekkoShapes.PEERS.filter { median(metric, it) != null }.minByOrNull { median(metric, it)!! } ?: return ""
            val parts = listOfNotNull(
                vs(best, PekkoWorkloads.GOAL, "best of Pekko's, $best (goal)"),
                vs("fjp", PekkoWorkloads.FLOOR, "fork-join-executor (floor)"),
            )
            return verdictText(metric, ex, parts)
        }
        if (LoopWorkloads.isLoop(metric) && ex == "stealing") {
            return verdictText(metric, ex, LoopWorkloads.targets(metric).mapNotNull { (peer, limit, name) -> vs(peer, limit, name) })
        }
        val vs: List<Verdict?> = when (metric to ex) {
            "fib-coroutines" to "stealing" -> listOf(vs("default", 0.6, "Default"))
            "fib-coroutines" to "stealing-inline" -> listOf(vs("default", 0.35, "Default"))
            "fib-coroutines" to "stealing-forkjoin" -> listOf(vs("default", 0.1, "Default"), vs("stealing-inline", 0.5, "awaitInline"))
            "fib-forkjoin" to "stealing" -> listOf(vs("fjp", 1.0, "FJP"))
            "noop-sep-total" to "stealing", "noop-ovl-total" to "stealing" -> listOf(vs("fjp", 1.0, "FJP"))
            "fanout-10000x100" to "stealing" -> listOf(speedup(metric, ours, 3.0), vs("default", 0.8, "Default"))
            "fanout-100x10000" to "stealing" -> listOf(speedup(metric, ours, 8.0), vs("default", 0.8, "Default"))
            "ping-pong-pool" to "stealing", "ping-pong-caller" to "stealing" -> listOf(vs("default", 1.0, "Default"))
            "pool-spread" to "stealing" -> listOf(spread(metric, ex), vs("fjp", 1.0, "FJP"))
            "alloc" to "stealing" -> listOf(Verdict(ours < 0.5, "0 B/dispatch (%.2f)".format(ours)))
            "timer-timeout" to "stealing", "timer-delay-cpu" to "stealing" -> listOf(vs("default", 0.5, "Default"))
            "timer-delay-p99" to "stealing" -> listOf(vs("default", 1.0, "Default"))
            // Throughput >= 2x STPE's and >= FJP's (JDK 25), as time: <= 0.5 x and <= 1.0 x.
            "timer-schedule-total" to "stealing" -> listOf(vs("stpe", 0.5, "STPE"), vs("fjp", 1.0, "FJP"))
            else -> return ""
        }
        return verdictText(metric, ex, vs.filterNotNull())
    }

    /** The target cell of [metric] on [ex] from its [parts] (recorded in [verdicts]); empty without parts. */
    private fun verdictText(metric: String, ex: String, parts: List<Verdict>): String {
        if (parts.isEmpty()) return ""
        val met = parts.all { it.met }
        val text = parts.joinToString("; ") { it.text } + if (met) ": met" else ": NOT met"
        verdicts["$metric ($ex)"] = Verdict(met, text)
        return text
    }

    /** The lock pool's time over ours must be at least [factor] (the WSQ-over-lock ratios of part 3 of Duffy's series). */
    private fun speedup(metric: String, ours: Double, factor: Double): Verdict? {
        val lock = median(metric, "lock") ?: return null
        val s = lock / ours
        return Verdict(s >= factor, ">= %.0fx faster than lock pool (%.2fx)".format(factor, s))
    }

    /** Slowest over fastest of [ex]'s pools (every pool of every JVM) must be at most [Report.SPREAD_LIMIT]. */
    private fun spread(metric: String, ex: String): Verdict? {
        val values = samples[metric to ex] ?: return null
        val r = values.max() / values.min()
        return Verdict(r <= Report.SPREAD_LIMIT, "slowest <= %.1f x fastest of %d pools (%.2f)".format(Report.SPREAD_LIMIT, values.size, r))
    }

    /**
     * The pool-instance spread's values one by one, in the order the pools were created; with
     * several JVMs, one group per JVM (the values of a JVM are consecutive in the samples).
     */
    private fun spreadLines(): List<String> {
        if (workloads.none { it.id == "pool-spread" }) return emptyList()
        val perJvm = mapOf("stealing" to Report.SPREAD_OURS, "fjp" to Report.SPREAD_FJP)
        fun line(metric: String, what: String): String? {
            val parts = perJvm.mapNotNull { (ex, n) ->
                val values = samples[metric to ex] ?: return@mapNotNull null
                "$ex " + values.chunked(n).joinToString(" | ") { jvm -> jvm.joinToString(" ") { Report.fmt(it) } }
            }
            return if (parts.isEmpty()) null else "pool-instance spread, ns per task, each pool's $what (JVMs separated by |): ${parts.joinToString("; ")}"
        }
        return listOfNotNull(line("pool-spread", "best burst"), line("pool-spread-median", "median burst"))
    }

    private fun idleVerdict(): Verdict? {
        val pct = idle["stealing"] ?: return null
        return Verdict(pct < 1.0, "idle CPU after a burst < 1%% of one core over %d s (%.3f%%)".format(options.idleSeconds, pct))
    }

    // ---- output ---------------------------------------------------------------------------

    fun printAndWrite() {
        idleVerdict()?.let { verdicts["idle pool CPU (stealing)"] = it }
        println()
        println(consoleTable())
        printExtras()
        println()
        println("Targets:")
        for ((what, v) in verdicts) println("  ${if (v.met) "met    " else "NOT met"}  $what: ${v.text.substringBeforeLast(':')}")
        println("  (fair-queue target: measured by JMH FairQueueBenchmark.bCompletion and checked by FairQueueSpec, not here)")
        options.outDir.mkdirs()
        val md = File(options.outDir, "report.md")
        md.writeText(markdown())
        val png = File(options.outDir, "report.png")
        try {
            writeChart(png)
            println("\nWrote ${md.path} and ${png.path}")
        } catch (e: Throwable) {
            println("\nWrote ${md.path}; the chart failed: $e")
            throw e
        }
        println(verdictLine(md.path))
    }

    /**
     * The report's last line: how many targets were met, which were not, and where to look
     * ([where]: the written `report.md`, or its "Targets" section inside it).
     */
    private fun verdictLine(where: String): String {
        val missed = verdicts.filterValues { !it.met }.keys
        val met = verdicts.size - missed.size
        val failed = if (failures.isEmpty()) "" else "; ${failures.size} run failure(s)"
        val look = if (missed.isEmpty() && failures.isEmpty()) "details: $where"
            else "see $where and, for the known gaps, docs/performance.md"
        return "Verdict: $met of ${verdicts.size} targets met" +
            (if (missed.isEmpty()) "" else ", NOT met: ${missed.joinToString(", ")}") + "$failed; $look"
    }

    private val header = listOf("workload", "executor", "median", "min - max", "x Default", "x FJP", "target")

    private fun cells(r: Row): List<String> = listOf(
        r.metric.title,
        r.executor,
        "${Report.fmt(r.median)} ${r.metric.unit}",
        "${Report.fmt(r.min)} - ${Report.fmt(r.max)}",
        r.vsDefault?.let { "%.2f".format(it) } ?: "-",
        r.vsFjp?.let { "%.2f".format(it) } ?: "-",
        r.target,
    )

    private fun consoleTable(): String {
        val table = listOf(header) + rows.map(::cells)
        val widths = header.indices.map { c -> table.maxOf { it[c].length } }
        val sb = StringBuilder()
        var last: String? = null
        for ((i, line) in table.withIndex()) {
            if (i > 0 && line[0] != last) sb.append(widths.joinToString("-+-") { "-".repeat(it) }).append('\n')
            last = line[0]
            sb.append(line.indices.joinToString(" | ") { c ->
                if (c in 2..5) line[c].padStart(widths[c]) else line[c].padEnd(widths[c])
            }.trimEnd()).append('\n')
        }
        return sb.toString()
    }

    private fun extrasLines(): List<String> = workloads.flatMap { w ->
        w.extras.map { m ->
            val values = ExecutorUnderTest.ALL.filter { it in w.executors }.mapNotNull { ex ->
                median(m.id, ex)?.let { "$ex %.2f".format(it) }
            }
            "${m.title}: ${values.joinToString(", ")}"
        }
    } + if (idle.isEmpty()) emptyList() else listOf(
        "idle CPU after a burst, percent of one core over ${options.idleSeconds} s: " +
            ExecutorUnderTest.ALL.filter { it in idle }.joinToString(", ") { "$it %.3f%%".format(idle.getValue(it)) },
    )

    private fun printExtras() = (extrasLines() + notes()).forEach { println(it) }

    private fun notes(): List<String> = spreadLines() + workloads.mapNotNull { it.note }

    private fun machine(): List<String> {
        val cpu = runCatching {
            File("/proc/cpuinfo").readLines().firstOrNull { it.startsWith("model name") }?.substringAfter(':')?.trim()
        }.getOrNull() ?: System.getProperty("os.arch")
        val rt = ManagementFactory.getRuntimeMXBean()
        return listOf(
            "Date: ${ZonedDateTime.now().format(DateTimeFormatter.RFC_1123_DATE_TIME)}",
            "Machine: $cpu, ${Runtime.getRuntime().availableProcessors()} available processors, " +
                "${System.getProperty("os.name")} ${System.getProperty("os.version")} (${System.getProperty("os.arch")}), " +
                "max heap ${Runtime.getRuntime().maxMemory() / (1 shl 20)} MB",
            "JDK: ${System.getProperty("java.vm.name")} ${System.getProperty("java.runtime.version")} (${System.getProperty("java.vm.vendor")})" +
                if (rt.inputArguments.isEmpty()) "" else ", JVM flags: ${rt.inputArguments.joinToString(" ")}",
            "Run: ${if (options.quick) "quick" else "full"} mode, ${options.warmupRounds} warm-up + ${options.rounds} measured rounds" +
                (if (options.jvms > 1) " in each of ${options.jvms} fresh JVMs (rounds pooled), " else ", ") +
                "executors alternated round by round, parallelism ${options.parallelism} (Dispatchers.Default: its own), %.0f s in all".format(elapsedSeconds),
        )
    }

    private fun markdown(): String = buildString {
        appendLine("# Stealing Dispatcher: comparison report")
        appendLine()
        for (l in machine()) appendLine("- $l")
        appendLine()
        appendLine("Produced by `java -cp benchmarks/target/benchmarks.jar dev.stealing.benchmarks.report.ReportKt${if (options.quick) " --quick" else ""}${if (options.jvms > 1) " --jvms ${options.jvms}" else ""}" +
            (options.only?.let { " --only '${it.pattern}'" } ?: "") +
            "${if (options.updateCommitted) " ${Options.UPDATE_COMMITTED}" else ""}`. " +
            "Median of the measured rounds; spread = min - max; ratios are our executor's median over the peer's (lower is better; " +
            "for the allocation row, bytes over bytes). Executors: `stealing` = StealingDispatcher (`await`), `stealing-inline` = the same " +
            "with `awaitInline`, `stealing-forkjoin` = the same with `forkJoin` instead of `async`, `default` = Dispatchers.Default, `fjp` = ForkJoinPool (RecursiveTask for fork/join), " +
            "`fjp-common` = ForkJoinPool.commonPool(), `tpe` = fixed ThreadPoolExecutor, `lock` / `lockwsq` = Duffy's 2008 pools, `single` = a one-thread executor, `stpe` = ScheduledThreadPoolExecutor (benchmarks/README.md).")
        if (options.quick) {
            appendLine()
            appendLine("**Quick mode**: few rounds; the figures are indicative only. Run without `--quick` (on an otherwise idle machine) for the figures to quote.")
        }
        appendLine()
        appendLine(header.joinToString(" | ", "| ", " |"))
        appendLine(header.joinToString(" | ", "| ", " |") { if (it in setOf("median", "min - max", "x Default", "x FJP")) "---:" else "---" })
        for (r in rows) appendLine(cells(r).joinToString(" | ", "| ", " |") { it.replace("|", "\\|") })
        appendLine()
        val extras = extrasLines() + notes()
        if (extras.isNotEmpty()) {
            extras.forEach { appendLine("- $it") }
            appendLine()
        }
        appendLine("## Targets")
        appendLine()
        for ((what, v) in verdicts) appendLine("- ${if (v.met) "**met**" else "**NOT met**"}: $what: ${v.text.substringBeforeLast(':')}")
        appendLine("- not measured here: fair queues (batch B behind batch A); its workload comes with the fair-queue feature. " +
            "Allocation is measured here with per-thread allocation counters; the JMH `-prof gc` run is the reference.")
        appendLine()
        appendLine("![ratios](report.png)")
        if (failures.isNotEmpty()) {
            appendLine()
            appendLine("## Failures")
            appendLine()
            failures.forEach { appendLine("- $it") }
        }
        appendLine()
        appendLine(verdictLine("the Targets section above" + if (failures.isEmpty()) "" else " and Failures"))
    }

    private fun writeChart(file: File) {
        val charts = listOf(
            chart("Time relative to Dispatchers.Default", "default") { it.vsDefault },
            chart("Time relative to ForkJoinPool", "fjp") { it.vsFjp },
        ).filterNotNull()
        if (charts.isEmpty()) return
        BitmapEncoder.saveBitmap(charts, charts.size, 1, file.path.removeSuffix(".png"), BitmapEncoder.BitmapFormat.PNG)
    }

    /**
     * Bars: one group per time metric that has the [peer], one bar per executor. A bar is the
     * log2 of the ratio, so it grows up from 1 when slower than the peer and down when faster,
     * and x2 and x0.5 are the same height; the axis is labelled in ratios.
     */
    private fun chart(title: String, peer: String, value: (Row) -> Double?): CategoryChart? {
        val timeRows = rows.filter { it.metric.unit != "B" && (value(it) ?: 0.0) > 0.0 }
        val metrics = timeRows.map { it.metric }.distinct()
        if (metrics.isEmpty()) return null
        val chart = CategoryChartBuilder().width(1400).height(560)
            .title("$title (below the line = faster than ${if (peer == "fjp") "FJP" else "Default"}; log scale)")
            .yAxisTitle("ratio (median over peer median)").build()
        chart.styler.apply {
            legendPosition = Styler.LegendPosition.OutsideE
            xAxisLabelRotation = 30
            availableSpaceFill = 0.85
            yAxisTickLabelsFormattingFunction = java.util.function.Function { v -> ratioLabel(v) }
        }
        val labels = metrics.map { it.label }
        for (ex in ExecutorUnderTest.ALL) {
            if (ex == peer) continue
            val ys = metrics.map { m ->
                timeRows.firstOrNull { it.metric === m && it.executor == ex }?.let(value)?.let { log2(it) }
            }
            if (ys.all { it == null }) continue
            chart.addSeries(ex, labels, ys).fillColor = COLORS.getValue(ex)
        }
        return chart
    }

    private fun log2(x: Double): Double = Math.log(x) / Math.log(2.0)

    private fun ratioLabel(log2: Double): String {
        val r = Math.pow(2.0, log2)
        return if (r >= 10) "x%.0f".format(r) else if (r >= 1) "x%.1f".format(r) else "x%.2f".format(r)
    }

    companion object {
        /** One colour per executor, the same in both charts. */
        private val COLORS = mapOf(
            "stealing" to java.awt.Color(0x1f77b4),
            "stealing-inline" to java.awt.Color(0x17becf),
            "stealing-forkjoin" to java.awt.Color(0xe377c2),
            "default" to java.awt.Color(0xff7f0e),
            "fjp" to java.awt.Color(0x2ca02c),
            "fjp-common" to java.awt.Color(0x98df8a),
            "tpe" to java.awt.Color(0x9467bd),
            "lock" to java.awt.Color(0xd62728),
            "lockwsq" to java.awt.Color(0x8c564b),
            "single" to java.awt.Color(0x7f7f7f),
            "stpe" to java.awt.Color(0xbcbd22),
            "stealing-affinity" to java.awt.Color(0xaec7e8),
            "affinity" to java.awt.Color(0xffbb78),
        )

        fun median(values: List<Double>): Double {
            val s = values.sorted()
            val n = s.size
            return if (n % 2 == 1) s[n / 2] else (s[n / 2 - 1] + s[n / 2]) / 2
        }
    }
}
