package dev.stealing.benchmarks.report

import dev.stealing.benchmarks.JavaLoopShapes
import dev.stealing.benchmarks.LoopShapes

/**
 * The report's parallel-loop rows (ids `loop-*`): each shape of [LoopShapes] and
 * [JavaLoopShapes] on our loops (`stealing`) and its peers, as listed there. Each measurement
 * runs the loop once and reports its time in milliseconds. The targets (in [ReportOutput]) compare `stealing` with the peers
 * of its own row.
 */
object LoopWorkloads {
    /**
     * The sums' target against the parallel stream, for the Kotlin and the Java forms alike: 0.9 x
     * on JDK 17 and 1.0 x on 25, whose stream is faster (docs/performance.md).
     */
    private val SUM_VS_STREAM = if (Runtime.version().feature() >= 25) 1.0 else 0.9

    /** Shape, title, and the targets: (peer executor id, at most this x the peer, the peer's name in the target cell). */
    private val shapes = listOf(
        Triple(
            "sum", "sum of i * i over 0 until 100M: parallelFold vs IntStream.parallel() in ForkJoinPool (fjp), forkJoin cut at 2^16 (stealing-forkjoin), a plain loop (single)",
            listOf(Triple("fjp", SUM_VS_STREAM, "parallel stream"), Triple("single", 0.55, "sequential"), Triple("stealing-forkjoin", 1.1, "hand-tuned forkJoin")),
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
        Triple(
            "java-sum", "Java: parallelReduceToLong of (long) i * i over 100M indices vs IntStream.range(..).parallel().mapToLong(..).sum() in ForkJoinPool (fjp)",
            listOf(Triple("fjp", SUM_VS_STREAM, "parallel stream")),
        ),
        Triple(
            "java-collect", "Java: parallelCollect of a 256-bucket histogram over 50M indices vs IntStream.range(..).parallel().collect(..) in ForkJoinPool (fjp)",
            listOf(Triple("fjp", 1.0, "parallel stream")),
        ),
        Triple(
            "java-map-skewed", "Java: parallelMap(list, f) over 1M elements, cost growing with the index to ~1,000 x, vs list.parallelStream().map(f).toList() in ForkJoinPool (fjp)",
            listOf(Triple("fjp", 0.9, "parallel stream")),
        ),
        Triple(
            "java-sort-objects", "Java: parallelSort(Integer[10M], comparator) vs Arrays.parallelSort(a, comparator) inside ForkJoinPool (fjp)",
            listOf(Triple("fjp", 1.0, "Arrays.parallelSort in FJP")),
        ),
        Triple(
            "java-sort-doubles", "Java: parallelSort(double[10M]) vs Arrays.parallelSort(double[]) inside ForkJoinPool (fjp)",
            listOf(Triple("fjp", 1.0, "Arrays.parallelSort in FJP")),
        ),
        Triple(
            "fold-user", "a user's (0 until 100_000_000).parallelFold({ 0L }, { acc, i -> acc + i.toLong() * i }, Long::plus), written at the call site, vs the java-sum stream (fjp)",
            listOf(Triple("fjp", SUM_VS_STREAM, "parallel stream")),
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
            if (shape in JavaLoopShapes.ALL) JavaLoopShapes.EXECUTORS else LoopShapes.EXECUTORS.getValue(shape),
            { ex -> mapOf(id to if (shape in JavaLoopShapes.ALL) JavaLoopShapes.run(shape, ex) else LoopShapes.run(shape, ex)) },
        )
    }
}
