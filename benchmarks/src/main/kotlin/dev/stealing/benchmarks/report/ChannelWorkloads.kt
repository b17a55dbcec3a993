package dev.stealing.benchmarks.report

import dev.stealing.benchmarks.ChannelShapes
import dev.stealing.benchmarks.ExecutorUnderTest
import dev.stealing.benchmarks.report.Report.Companion.SETTLE_MILLIS
import dev.stealing.benchmarks.report.Report.Companion.WARMUP_MIN_MILLIS
import dev.stealing.benchmarks.report.Report.Companion.rotate

/**
 * The report's channel and semaphore rows (ids `ch-p<p>-<shape>`): each shape of
 * [ChannelShapes] at parallelism 1, 2 and 4, on our pool (`StealingDispatcher(p)`),
 * `Dispatchers.Default.limitedParallelism(p)` (`default`), `ForkJoinPool(p)` (`fjp`) and
 * `Executors.newFixedThreadPool(p)` (`tpe`). A workload per parallelism and kind of shape
 * (`ch-p2-sem`, ...) creates its own four executors ([Workload.ownPools]) and runs once after
 * the rounds, with warm-up and the executors rotated from round to round as the other rows.
 * Values are ns per operation (an acquisition, or a message). Targets (in [ReportTargets]): at
 * most [AT_MOST_CORES] x Default where p <= the cores, at most [OVERSUBSCRIBED] x Default above;
 * and the geometric mean of our ratio to the better of Default and FJP over the rows with
 * p <= the cores at most [GEOMEAN].
 */
class ChannelWorkloads(private val options: Options) {
    fun workloads(): List<Workload> = ChannelShapes.PARALLELISMS.flatMap { p -> KINDS.map { kind -> p to kind } }.mapIndexed { i, (p, kind) ->
        val shapes = ChannelShapes.ALL.filter { it.startsWith("$kind-") }
        Workload(
            "ch-p$p-$kind",
            shapes.map { shape -> Metric(metricId(p, shape), title(p, shape), "ns", "p$p $shape") },
            ChannelShapes.EXECUTORS,
            { error("ch-p$p-$kind creates its own executors") },
            note = if (i == 0) "ch-*: default = `Dispatchers.Default.limitedParallelism(p)`, " +
                "stealing = `StealingDispatcher(p)`, fjp = `ForkJoinPool(p)`, tpe = `Executors.newFixedThreadPool(p)`; " +
                "targets: <= $AT_MOST_CORES x Default where p <= ${ExecutorUnderTest.CORES} cores, <= $OVERSUBSCRIBED x above; " +
                "geomean over p <= cores <= $GEOMEAN x the better of Default and FJP." else null,
            ownPools = { measure(p, shapes) },
        )
    }

    private fun title(p: Int, shape: String): String {
        val n = ChannelShapes.launched(shape, p)
        val coroutines = if (n == 1) "1 coroutine" else "$n coroutines"
        val parts = shape.split('-')
        val what = when (parts[0]) {
            "chsem" -> "channel(${parts[1]}) as a semaphore, $coroutines"
            "sem" -> "Semaphore(${parts[1]}), $coroutines"
            else -> "producers/consumers, ${if (parts[1] == "rdv") "rendezvous" else "buffered(${ChannelShapes.BUFFER})"} channel, $coroutines"
        }
        return "channels, p = $p: $what (per operation)"
    }

    /**
     * Runs [shapes] at parallelism [p] on every executor: warm-up rounds, then the measured
     * rounds, rotated. A run has [ChannelShapes.OPS] operations, or as many as fit in
     * [RUN_BUDGET_MILLIS] at the speed that executor has shown on the shape, so that a peer that
     * takes tens of microseconds per hand-off (`ForkJoinPool(4)` on 2 cores, with a channel as a
     * lock) still ends within the report's run limit; values are per operation.
     *
     * The first size comes from a short run ([PROBE_OPS]), which on the first executor of a
     * fresh JVM runs interpreted code (100 times slower or more); so warm-up runs let the size
     * grow again, doubling at most per run, and measured runs only shrink it. Before, the size
     * only shrank: the first executor of every workload (ours, in round 0 of the rotation) kept
     * the probe's size on its first shape (2,939 operations where the others ran 41,057-100,000)
     * and paid a run's fixed costs (the coroutine's loop entered interpreted, then on-stack
     * replaced) over that few: 1.2-1.6 x Default on a shape that never dispatches
     * (docs/investigations/2026-12-03-the-channel-rows-first-shape.md).
     */
    private fun measure(p: Int, shapes: List<String>): Map<Pair<String, String>, List<Double>> {
        val executors = ChannelShapes.EXECUTORS.map { ExecutorUnderTest.create(it, p) }
        try {
            val values = HashMap<Pair<String, String>, MutableList<Double>>()
            val ops = HashMap<Pair<String, String>, Int>()
            for (round in 0 until options.warmupRounds + options.rounds) {
                for (ex in rotate(executors, round)) {
                    for (shape in shapes) {
                        val key = metricId(p, shape) to ex.id
                        var n = ops.getOrPut(key) { resized(ChannelShapes.OPS, ChannelShapes.run(shape, ex, PROBE_OPS), mayGrow = false) }
                        Thread.sleep(SETTLE_MILLIS)
                        if (round < options.warmupRounds) {
                            val start = System.nanoTime()
                            while (System.nanoTime() - start < WARMUP_MIN_MILLIS * 1_000_000 / 4) {
                                n = resized(n, ChannelShapes.run(shape, ex, n), mayGrow = true)
                            }
                            ops[key] = n
                        } else {
                            val nanosPerOp = ChannelShapes.run(shape, ex, n)
                            values.getOrPut(key) { ArrayList() }.add(nanosPerOp)
                            ops[key] = resized(n, nanosPerOp, mayGrow = false)
                        }
                    }
                }
            }
            return values
        } finally {
            executors.forEach { it.close() }
        }
    }

    /**
     * Operations for the next run of a shape after a run of [current] at [nanosPerOp]: as many
     * as fit in [RUN_BUDGET_MILLIS] at that speed, at most [ChannelShapes.OPS] and at least
     * [PROBE_OPS]; fewer than [current] at once when the run was slow, more only if [mayGrow]
     * and then at most twice [current]. So an executor with a slow mode (`ForkJoinPool(4)` on 2
     * cores swings between about 4 and 60 us per hand-off) that shows it once stays within the
     * run limit, and a run after a fast one takes at most twice the budget.
     */
    private fun resized(current: Int, nanosPerOp: Double, mayGrow: Boolean): Int {
        val fits = minOf(ChannelShapes.OPS.toDouble(), RUN_BUDGET_MILLIS * 1e6 / nanosPerOp).toInt()
        val next = if (mayGrow) minOf(fits, current * 2) else minOf(fits, current)
        return next.coerceAtLeast(PROBE_OPS)
    }

    companion object {
        /** The groups of shapes, a workload each at each parallelism (so each stays within the report's run limit). */
        private val KINDS = listOf("chsem", "sem", "pc")

        /** Operations of the first, short run of each shape on each executor, which sizes the others. */
        private const val PROBE_OPS = 1_000

        /** Longest a run should take: fewer operations than [ChannelShapes.OPS] for an executor slower than this. */
        private const val RUN_BUDGET_MILLIS = 300L

        /** At most this x Default where the parallelism is at most the cores. */
        const val AT_MOST_CORES = 1.0

        /** At most this x Default where the parallelism is above the cores. */
        const val OVERSUBSCRIBED = 1.1

        /** The geometric mean, over p <= cores, of our ratio to the better of Default and FJP. */
        const val GEOMEAN = 0.9

        fun metricId(p: Int, shape: String) = "ch-p$p-$shape"

        /** Whether [metric] is one of these rows. */
        fun isChannel(metric: String): Boolean = metric.startsWith("ch-p")

        /** The parallelism of row [metric]. */
        fun parallelismOf(metric: String): Int = metric.removePrefix("ch-p").substringBefore('-').toInt()
    }
}
