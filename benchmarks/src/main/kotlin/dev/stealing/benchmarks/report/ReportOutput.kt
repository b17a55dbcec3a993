package dev.stealing.benchmarks.report

import dev.stealing.benchmarks.ExecutorUnderTest
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

    /** The targets, judged while [rows] is built (declared first: initialisers run in order). */
    private val targets = ReportTargets(options, samples, idle)

    private val verdicts get() = targets.verdicts

    private fun median(metric: String, executor: String): Double? = samples[metric to executor]?.let(::median)

    private val rows: List<Row> = workloads.flatMap { w ->
        w.metrics.flatMap { m ->
            ExecutorUnderTest.ALL.filter { it in w.executors }.mapNotNull { ex ->
                val values = samples[m.id to ex] ?: return@mapNotNull null
                val med = median(values)
                Row(
                    m, ex, med, values.min(), values.max(), values.size,
                    ratio(med, median(m.id, "default")), ratio(med, median(m.id, "fjp")),
                    targets.target(m.id, ex),
                )
            }
        }
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


    // ---- output ---------------------------------------------------------------------------

    fun printAndWrite() {
        targets.judgeWholeRun()
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
