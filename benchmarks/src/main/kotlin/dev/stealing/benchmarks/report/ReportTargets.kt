package dev.stealing.benchmarks.report

import dev.stealing.benchmarks.CompletableFutureShapes
import dev.stealing.benchmarks.ExecutorUnderTest
import dev.stealing.benchmarks.PekkoShapes

/** [a] over [b], or null without [b] (or with a zero one): every ratio of the report's tables and targets. */
internal fun ratio(a: Double, b: Double?): Double? = if (b == null || b == 0.0) null else a / b

/** A target judged: whether it was met, and what it says (ending in ": met" or ": NOT met" for a row's cell). */
class Verdict(val met: Boolean, val text: String)

/**
 * The report's performance targets, judged from the samples: the target cell of each row
 * ([target]) and the targets over the whole run ([judgeWholeRun]); every verdict is kept in
 * [verdicts], in the order judged, for [ReportOutput]'s list and last line.
 */
class ReportTargets(
    private val options: Options,
    /** (metric id, executor id) -> measured values, one per measured round. */
    private val samples: Map<Pair<String, String>, List<Double>>,
    /** Executor id -> idle CPU in percent of one core (empty if not measured). */
    private val idle: Map<String, Double>,
) {
    /** Every verdict so far: "metric (executor)" or a whole-run name -> verdict. */
    val verdicts = LinkedHashMap<String, Verdict>()

    private fun median(metric: String, executor: String): Double? = samples[metric to executor]?.let(ReportOutput::median)

    /** The targets over the whole run: idle CPU, and the channel rows' geometric mean. */
    fun judgeWholeRun() {
        idleVerdict()?.let { verdicts["idle pool CPU (stealing)"] = it }
        channelGeomeanVerdict()?.let { verdicts["channel rows, p <= cores, geomean (stealing)"] = it }
    }

    /** The target cell of row [metric] on [ex] (empty where it has none), its verdict recorded. */
    fun target(metric: String, ex: String): String {
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
        if (ChannelWorkloads.isChannel(metric) && ex == "stealing") {
            val limit = if (ChannelWorkloads.parallelismOf(metric) <= ExecutorUnderTest.CORES) ChannelWorkloads.AT_MOST_CORES else ChannelWorkloads.OVERSUBSCRIBED
            return verdictText(metric, ex, listOfNotNull(vs("default", limit, "Default")))
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


    private fun idleVerdict(): Verdict? {
        val pct = idle["stealing"] ?: return null
        return Verdict(pct < 1.0, "idle CPU after a burst < 1%% of one core over %d s (%.3f%%)".format(options.idleSeconds, pct))
    }

    /**
     * The channel rows' joint target: over the rows with parallelism at most the cores, the
     * geometric mean of our median over the better of Default's and FJP's.
     */
    private fun channelGeomeanVerdict(): Verdict? {
        val ratios = samples.keys.map { it.first }.distinct()
            .filter { ChannelWorkloads.isChannel(it) && ChannelWorkloads.parallelismOf(it) <= ExecutorUnderTest.CORES }
            .mapNotNull { m ->
                val ours = median(m, "stealing") ?: return@mapNotNull null
                val best = listOfNotNull(median(m, "default"), median(m, "fjp")).minOrNull() ?: return@mapNotNull null
                ours / best
            }
        if (ratios.isEmpty()) return null
        val geomean = Math.exp(ratios.sumOf { Math.log(it) } / ratios.size)
        return Verdict(
            geomean <= ChannelWorkloads.GEOMEAN,
            "<= %.2f x the better of Default and FJP, geomean of %d rows (%.2f)".format(ChannelWorkloads.GEOMEAN, ratios.size, geomean),
        )
    }
}
