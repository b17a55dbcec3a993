package dev.stealing.benchmarks.report

/**
 * How far a report run has got: the share of its runs done, the time spent and an estimate of
 * the time left. On a terminal, one line on stderr, rewritten in place before each run with
 * the round, workload and executor it starts ([starting]); in a log (no console), nothing per
 * run: the harness's line per workload and round carries [summary] instead, so a log reads as
 * plain lines.
 */
class Progress(private val totalRuns: Int, private val jvmLabel: String?) {
    private val started = System.nanoTime()
    private var done = 0
    private val inPlace = System.console() != null
    private var lastWidth = 0

    /** Before a run of [executor] on [workload] in round [tag]: on a terminal, the line in place. */
    fun starting(tag: String, workload: String, executor: String) {
        if (!inPlace) return
        val line = "${summary()}  [$tag] $workload: $executor"
        System.err.print("\r" + line.padEnd(lastWidth))
        System.err.flush()
        lastWidth = line.length
    }

    /** After a run (or a skipped one): counts it. */
    fun finished() {
        done++
    }

    /** Ends the line in place before the harness prints a line of its own. */
    fun clearLine() {
        if (!inPlace || lastWidth == 0) return
        System.err.print("\r" + " ".repeat(lastWidth) + "\r")
        System.err.flush()
        lastWidth = 0
    }

    /** `[JVM 2 of 3, 41%, 3:12 spent, about 4:36 left]`. */
    fun summary(): String {
        val spent = (System.nanoTime() - started) / 1_000_000_000L
        val share = if (totalRuns == 0) 1.0 else done.toDouble() / totalRuns
        val left = if (done == 0) "" else ", about ${clock((spent * (1 - share) / share).toLong())} left"
        val jvm = jvmLabel?.let { "$it, " } ?: ""
        return "[$jvm${(share * 100).toInt()}%, ${clock(spent)} spent$left]"
    }

    private fun clock(seconds: Long): String = "%d:%02d".format(seconds / 60, seconds % 60)
}
