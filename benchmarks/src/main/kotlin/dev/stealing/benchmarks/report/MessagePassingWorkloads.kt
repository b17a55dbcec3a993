package dev.stealing.benchmarks.report

import dev.stealing.benchmarks.ExecutorUnderTest
import dev.stealing.benchmarks.MessagePassingShapes

/**
 * The report's message-passing rows: each shape of [MessagePassingShapes] on our pool,
 * `Dispatchers.Default`, a `ForkJoinPool` dispatcher and a one-thread executor dispatcher
 * (`single`). A shape takes from tens of microseconds to tens of milliseconds, so each
 * measurement runs it a number of times in a row (about 20-50 ms in all) and reports the mean
 * time of one run, in microseconds. The target of every row (in [ReportOutput]): at most 1.0 x
 * Default and at most 1.1 x the best of the three peers.
 */
object MessagePassingWorkloads {
    /** The peers of the message-passing rows, besides `stealing`. */
    val PEERS = listOf("default", "fjp", "single")

    private val cores = ExecutorUnderTest.CORES

    /** Shape id, its title in the table, and the runs per measurement. */
    private val shapes = listOf(
        Triple("chain-1", "1 coroutine, 1,000 x async { }.await() in a chain", 20),
        Triple("chain-8", "8 coroutines, each 1,000 x async { }.await() in a chain", 5),
        Triple("jobs-1", "1 job released by a gate, reads shared state, 2 yields", 300),
        Triple("jobs-8", "8 jobs released together, read shared state, 2 yields each", 100),
        Triple("actor-1x1", "1 server actor (1,024-long state), 1 requester x 2,000 requests", 10),
        Triple("actor-1xN", "1 server actor, $cores requesters x 2,000 requests", 4),
        Triple("actor-NxN", "$cores server actors, $cores requesters x 2,000 requests", 4),
        Triple("ring-1", "ring of $cores actors, 1,000 laps of one message, state 1", 30),
        Triple("ring-1024", "ring of $cores actors, 1,000 laps of one message, state 1,024", 5),
        Triple("pingpong-1", "actor ping-pong, 1 pair x 10,000 messages", 4),
        Triple("pingpong-N", "actor ping-pong, $cores pairs x 10,000 messages", 2),
    )

    /** Whether [metric] is one of these rows (ids start with `mp-`). */
    fun isMessagePassing(metric: String): Boolean = metric.startsWith("mp-")

    fun workloads(): List<Workload> = shapes.map { (shape, title, runs) ->
        val id = "mp-$shape"
        Workload(
            id,
            listOf(Metric(id, "message passing: $title (per run)", "µs", shape)),
            listOf("stealing") + PEERS,
            { ex ->
                val t0 = System.nanoTime()
                repeat(runs) { MessagePassingShapes.run(shape, ex) }
                mapOf(id to (System.nanoTime() - t0) / 1e3 / runs)
            },
        )
    }
}
