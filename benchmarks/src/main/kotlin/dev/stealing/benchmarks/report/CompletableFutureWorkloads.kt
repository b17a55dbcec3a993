package dev.stealing.benchmarks.report

import dev.stealing.benchmarks.CompletableFutureShapes

/**
 * The report's `CompletableFuture` rows (ids `cf-*`): each shape of [CompletableFutureShapes]
 * with the pool's executor (`stealing`) and its peers `ForkJoinPool(parallelism)` (`fjp`),
 * `ForkJoinPool.commonPool()` (`fjp-common`) and a fixed thread pool (`tpe`). A shape takes
 * from tens of microseconds to milliseconds, so each measurement runs it a number of times in a
 * row and reports the mean time of one run, in microseconds; the chain and the ping-pong are
 * timed inside the pool, without the wake-ups from and to the caller ([CompletableFutureShapes]). The targets (in
 * [ReportOutput]): at most 1.0 x the best peer of the row (the floor) and at most 0.9 x (the
 * goal).
 */
object CompletableFutureWorkloads {
    /** Shape id, its title in the table, and the runs per measurement. */
    private val shapes = listOf(
        Triple("chain", "a chain of ${CompletableFutureShapes.CHAIN_STAGES} thenApplyAsync stages, timed in the pool", 10),
        Triple("allof", "${CompletableFutureShapes.ALLOF_TASKS} supplyAsync from outside, joined by allOf", 4),
        Triple("pingpong", "ping-pong: ${CompletableFutureShapes.PINGPONG_ROUNDS} rounds of thenComposeAsync handing to a supplyAsync and back, timed in the pool", 5),
    )

    /** The floor and the goal of every row: at most this x the best peer. */
    const val FLOOR = 1.0
    const val GOAL = 0.9

    /** Whether [metric] is one of these rows (ids start with `cf-`). */
    fun isCompletableFuture(metric: String): Boolean = metric.startsWith("cf-")

    fun workloads(): List<Workload> = shapes.map { (shape, title, runs) ->
        val id = "cf-$shape"
        Workload(
            id,
            listOf(Metric(id, "CompletableFuture: $title (per run)", "µs", "cf $shape")),
            CompletableFutureShapes.EXECUTORS,
            { ex ->
                // A thread per stage (the common pool of parallelism 1) takes a second or more per run: one is enough.
                val n = if (ex.id == "fjp-common" && !CompletableFutureShapes.commonPoolUsed) 1 else runs
                var total = 0.0
                repeat(n) { total += CompletableFutureShapes.run(shape, ex) }
                mapOf(id to total / n)
            },
            note = if (shape == "chain") "cf-*: stealing = `StealingDispatcher.executor`, fjp = `ForkJoinPool(parallelism)`, " +
                "tpe = `Executors.newFixedThreadPool(parallelism)`, ${CompletableFutureShapes.commonPoolNote}; " +
                "chain and pingpong timed in the pool (first task to last stage), allof from the caller; " +
                "targets: <= $FLOOR x the best peer (floor), <= $GOAL x (goal)." else null,
        )
    }
}
