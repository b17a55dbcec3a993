package dev.stealing.benchmarks

import dev.stealing.benchmarks.report.Report

/**
 * The channel shapes ([ChannelShapes]) alternated in one JVM on a few executors, with the pool's
 * counters per operation: where its tasks came from (own deque, global queue, steals) and how
 * often a worker parked and was woken. Prints, per shape, each executor's mean ns per operation
 * over 20 runs, for every round but the first, sorted; then the pool's counters of the last round.
 * `-Dprobe.settleMillis=20` pauses before each run, as the report does; `-Dprobe.asReport=true`
 * runs in the report's order instead (every shape once per executor per round, one run at a time).
 *
 * ```
 * java -cp benchmarks/target/benchmarks.jar dev.stealing.benchmarks.ChannelProbe 2 sem-8-p,pc-rdv-1000 stealing,default 6
 * ```
 */
object ChannelProbe {
    private const val RUNS = 20

    /** A pause before each run, as the report's (`-Dprobe.settleMillis=20`); none by default. */
    private val settleMillis = java.lang.Long.getLong("probe.settleMillis", 0L)

    /** Longest one run may take before the probe prints the executor's threads and gives up. */
    private const val RUN_LIMIT_SECONDS = 60L

    private val driver = java.util.concurrent.Executors.newSingleThreadExecutor { r -> Thread(r, "probe-driver").apply { isDaemon = true } }

    /** One run of [shape] on [ex] on a driver thread; on a run over the limit, prints the pool's counters and its threads, and throws. */
    private fun runWatched(shape: String, ex: ExecutorUnderTest): Double {
        val run = driver.submit(java.util.concurrent.Callable { ChannelShapes.run(shape, ex) })
        try {
            return run.get(RUN_LIMIT_SECONDS, java.util.concurrent.TimeUnit.SECONDS)
        } catch (e: java.util.concurrent.TimeoutException) {
            println("$shape on ${ex.id}: no result within $RUN_LIMIT_SECONDS s; stats: ${ex.stealing?.stats()}")
            for ((t, frames) in Thread.getAllStackTraces()) {
                if (!t.name.startsWith(ex.threadNamePrefix) && t.name != "probe-driver") continue
                println("  ${t.name} ${t.state}")
                frames.take(12).forEach { println("      at $it") }
            }
            throw e
        }
    }

    /**
     * The report's order instead (`-Dprobe.asReport=true`): in each round every executor, in an
     * order rotated by one per round, runs every shape once, each run after a pause of 20 ms;
     * prints each shape's runs per executor, sorted, without the first round.
     */
    private fun asReport(p: Int, shapes: List<String>, executors: List<ExecutorUnderTest>, rounds: Int) {
        val times = HashMap<Pair<String, String>, MutableList<Double>>()
        repeat(rounds) { round ->
            for (k in executors.indices) {
                val ex = executors[(k + round) % executors.size]
                for (shape in shapes) {
                    Thread.sleep(Report.SETTLE_MILLIS)
                    val t = runWatched(shape, ex)
                    if (round > 0) times.getOrPut(shape to ex.id) { ArrayList() }.add(t)
                }
            }
        }
        for (shape in shapes) {
            println("p=$p $shape: " + executors.joinToString("; ") { ex -> "${ex.id} " + times.getValue(shape to ex.id).sorted().joinToString(" ") { "%.0f".format(it) } })
        }
    }

    @JvmStatic
    fun main(args: Array<String>) {
        val p = args[0].toInt()
        val shapes = args[1].split(',')
        val executors = args.getOrElse(2) { "stealing,default" }.split(',').map { ExecutorUnderTest.create(it, p) }
        val rounds = args.getOrElse(3) { "6" }.toInt()
        try {
            if (java.lang.Boolean.getBoolean("probe.asReport")) {
                asReport(p, shapes, executors, rounds)
                return
            }
            for (shape in shapes) {
                val times = executors.associate { it.id to ArrayList<Double>() }
                var counters = ""
                repeat(rounds) { round ->
                    for (ex in if (round % 2 == 0) executors else executors.reversed()) {
                        val before = ex.stealing?.stats()
                        var sum = 0.0
                        repeat(RUNS) {
                            if (settleMillis > 0) Thread.sleep(settleMillis)
                            sum += runWatched(shape, ex)
                        }
                        if (round > 0) times.getValue(ex.id).add(sum / RUNS)
                        val after = ex.stealing?.stats()
                        if (before != null && after != null) {
                            val ops = RUNS * ChannelShapes.OPS.toDouble()
                            fun per(a: Long, b: Long) = "%.3f".format((a - b) / ops)
                            counters = "tasks ${per(after.executed, before.executed)}, local ${per(after.localPops, before.localPops)}, " +
                                "global ${per(after.globalPops, before.globalPops)}, steals ${per(after.steals, before.steals)} " +
                                "of ${per(after.stealAttempts, before.stealAttempts)} attempts, parks ${per(after.parks, before.parks)}, " +
                                "unparks ${per(after.unparks, before.unparks)}"
                        }
                    }
                }
                println("p=$p $shape: " + times.entries.joinToString("; ") { (id, v) -> "$id " + v.sorted().joinToString(" ") { "%.0f".format(it) } })
                if (counters.isNotEmpty()) println("  stealing per operation: $counters")
            }
        } finally {
            executors.forEach { it.close() }
        }
    }
}
