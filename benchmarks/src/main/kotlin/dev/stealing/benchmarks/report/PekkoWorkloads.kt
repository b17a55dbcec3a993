package dev.stealing.benchmarks.report

import dev.stealing.benchmarks.PekkoShapes
import dev.stealing.benchmarks.report.Report.Companion.SETTLE_MILLIS
import dev.stealing.benchmarks.report.Report.Companion.WARMUP_MIN_MILLIS
import dev.stealing.benchmarks.report.Report.Companion.rotate

/**
 * The report's Apache Pekko rows (ids `pekko-*`): the shapes of Pekko's own actor benchmarks
 * ([PekkoShapes]) on a dispatcher whose executor is ours (`stealing`, and `stealing-affinity`
 * with `affinity = on`) or one of Pekko's (`fjp` = `fork-join-executor`, Pekko's default;
 * `tpe` = `thread-pool-executor`; `affinity` = `affinity-pool-executor`), all with the report's
 * parallelism. Each row creates its own actor system with every dispatcher in it, so it runs
 * once after the rounds ([Workload.ownPools]), with warm-up and executors rotated from round to
 * round as the other rows. Values are ns per message. Targets (in [ReportOutput]): at most
 * [GOAL] x the best of Pekko's executors, and at most [FLOOR] x `fork-join-executor`.
 */
class PekkoWorkloads(private val options: Options) {
    /** A row: id, title, and what one run does (ns per message). */
    private class Shape(val id: String, val title: String, val run: (org.apache.pekko.actor.ActorSystem, String) -> Double)

    private val cores = options.parallelism

    private fun shapes(): List<Shape> = PekkoShapes.THROUGHPUTS.flatMap { t ->
        listOf("pp-few", "pp-many").map { shape ->
            val pairs = PekkoShapes.pairs(shape, cores)
            val perPair = (if (t == 1) 100_000 else 200_000) / pairs
            Shape(
                "pekko-$shape-t$t",
                "Pekko: ping-pong, $pairs actor pair${if (pairs > 1) "s" else ""} (${if (shape == "pp-few") "fewer" else "more"} than cores), " +
                    "throughput $t, ${2 * t} in flight per pair (per message)",
            ) { system, ex -> PekkoShapes.pingPong(system, PekkoShapes.dispatcherId(ex, t), pairs, perPair, t) }
        }
    } + listOf(
        Shape("pekko-flood-pipe", "Pekko: flood pipe, 200,000 messages from the caller through 4 actors, throughput 50 (per message)") { system, ex ->
            PekkoShapes.floodPipe(system, PekkoShapes.dispatcherId(ex, 50), 200_000)
        },
        Shape("pekko-tell-only", "Pekko: tell-only, 200,000 messages from the caller to one actor, throughput 50 (per message)") { system, ex ->
            PekkoShapes.tellOnly(system, PekkoShapes.dispatcherId(ex, 50), 200_000)
        },
    )

    fun workloads(): List<Workload> = shapes().mapIndexed { i, shape ->
        Workload(
            shape.id,
            listOf(Metric(shape.id, shape.title, "ns", shape.id.removePrefix("pekko-"))),
            PekkoShapes.EXECUTORS,
            { error("${shape.id} creates its own actor system") },
            note = if (i == 0) "pekko-*: an actor system per row with a dispatcher per executor, ${cores} threads each, Pekko's " +
                "single-consumer mailbox; " + PekkoShapes.NAMES.entries.joinToString("; ") { (id, name) -> "$id = $name" } +
                "; targets: <= $GOAL x the best of Pekko's executors (goal), <= $FLOOR x fork-join-executor (floor)." else null,
            ownPools = { measure(shape) },
        )
    }

    /** Runs [shape] on every executor: warm-up rounds of at least [WARMUP_MIN_MILLIS] each, then the measured rounds, rotated. */
    private fun measure(shape: Shape): Map<Pair<String, String>, List<Double>> {
        val system = PekkoShapes.newSystem(cores)
        try {
            val executors = PekkoShapes.EXECUTORS
            val values = executors.associateWith { ArrayList<Double>() }
            for (round in 0 until options.warmupRounds + options.rounds) {
                for (ex in rotate(executors, round)) {
                    Thread.sleep(SETTLE_MILLIS)
                    if (round < options.warmupRounds) {
                        val start = System.nanoTime()
                        while (System.nanoTime() - start < WARMUP_MIN_MILLIS * 1_000_000) shape.run(system, ex)
                    } else {
                        values.getValue(ex).add(shape.run(system, ex))
                    }
                }
            }
            return values.mapKeys { (ex, _) -> shape.id to ex }
        } finally {
            PekkoShapes.terminate(system)
        }
    }

    companion object {
        const val GOAL = 0.9
        const val FLOOR = 1.0

        /** Whether [metric] is one of these rows. */
        fun isPekko(metric: String): Boolean = metric.startsWith("pekko-")
    }
}
