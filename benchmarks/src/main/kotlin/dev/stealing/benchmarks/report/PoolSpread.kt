package dev.stealing.benchmarks.report

import dev.stealing.StealingDispatcher
import dev.stealing.benchmarks.InPoolSubmit
import dev.stealing.benchmarks.report.Report.Companion.SETTLE_MILLIS
import dev.stealing.benchmarks.report.Report.Companion.SPREAD_BLOCK
import dev.stealing.benchmarks.report.Report.Companion.SPREAD_FJP
import dev.stealing.benchmarks.report.Report.Companion.SPREAD_LIMIT
import dev.stealing.benchmarks.report.Report.Companion.SPREAD_OURS
import dev.stealing.benchmarks.report.Report.Companion.WARMUP_MIN_MILLIS
import dev.stealing.benchmarks.report.Report.Companion.rotate
import java.util.concurrent.Executor
import java.util.concurrent.ForkJoinPool
import java.util.concurrent.TimeUnit

/**
 * The report's pool-instance spread row (`pool-spread`, with its median row): whether every pool
 * of ours runs as fast as every other. Unlike the other rows it creates its own pools, several
 * of ours and of `ForkJoinPool` alive at once in one JVM, and [Report] runs it once after the
 * rounds; the limits and counts are [Report.SPREAD_OURS], [Report.SPREAD_FJP],
 * [Report.SPREAD_BLOCK] and [Report.SPREAD_LIMIT].
 */
class PoolSpread(private val options: Options) {
    /** The row: two metrics per pool kind, each value one pool's. */
    fun workload(): Workload = Workload(
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
    )

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
}
