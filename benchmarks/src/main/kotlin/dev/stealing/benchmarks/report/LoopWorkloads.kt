package dev.stealing.benchmarks.report

import dev.stealing.benchmarks.LoopShapes

/**
 * The report's parallel-loop rows (ids `loop-*`): each shape of [LoopShapes] on our loops
 * (`stealing`) and its peers, as listed there. Each measurement runs the loop once and reports
 * its time in milliseconds. The targets (in [ReportOutput]) compare `stealing` with the peers
 * of its own row.
 */
object LoopWorkloads {
    /** Shape, title, and the targets: (peer executor id, at most this x the peer, the peer's name in the target cell). */
    private val shapes = listOf(
        Triple(
            "sum", "sum of i * i over 0 until 100M: parallelFold vs IntStream.parallel() in ForkJoinPool (fjp), forkJoin cut at 2^16 (stealing-forkjoin), a plain loop (single)",
            listOf(Triple("fjp", 0.9, "parallel stream"), Triple("single", 0.55, "sequential"), Triple("stealing-forkjoin", 1.1, "hand-tuned forkJoin")),
        ),
        Triple(
            "sum-1worker", "the same sum: parallelFold on StealingDispatcher(1) vs a plain loop (single)",
            listOf(Triple("single", 1.1, "sequential")),
        ),
        Triple(
            "map-skewed", "parallelMap over 1M elements, cost growing with the index to ~1,000 x, vs parallelStream().map in ForkJoinPool (fjp), List.map (single)",
            listOf(Triple("fjp", 0.9, "parallel stream"), Triple("single", 0.6, "sequential")),
        ),
        Triple(
            "sort", "IntArray.parallelSort of 10M random ints vs Arrays.parallelSort with default settings (default) and inside ForkJoinPool (fjp)",
            listOf(Triple("default", 1.0, "Arrays.parallelSort"), Triple("fjp", 0.9, "Arrays.parallelSort in FJP")),
        ),
    )

    /** Whether [metric] is one of these rows. */
    fun isLoop(metric: String): Boolean = metric.startsWith("loop-")

    /** The targets of [metric]'s `stealing` row: (peer, limit, peer's name). */
    fun targets(metric: String): List<Triple<String, Double, String>> =
        shapes.firstOrNull { "loop-${it.first}" == metric }?.third ?: emptyList()

    fun workloads(): List<Workload> = shapes.map { (shape, title, _) ->
        val id = "loop-$shape"
        Workload(
            id,
            listOf(Metric(id, "parallel loops: $title", "ms", "loop $shape")),
            LoopShapes.EXECUTORS.getValue(shape),
            { ex -> mapOf(id to LoopShapes.run(shape, ex)) },
        )
    }
}
