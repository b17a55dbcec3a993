package dev.stealing.benchmarks.report

import dev.stealing.benchmarks.ExecutorUnderTest
import java.io.File
import kotlin.system.exitProcess

/**
 * The comparison report: a short run of the key workloads (the same code as the JMH suite, from
 * the workload files of `dev.stealing.benchmarks`) on every executor, then a table of medians,
 * spreads and ratios to `Dispatchers.Default` and to `ForkJoinPool`, with the performance
 * targets marked. This file is its entry point and command line (`main`, [Options]); the
 * harness that runs the rounds is [Report] (ReportHarness.kt), in fresh JVMs [MultiJvmReport];
 * the rows are [CoreWorkloads], [PoolSpread] and the other `*Workloads` objects of this package;
 * the table, `report.md` and the chart are [ReportOutput].
 *
 * ```
 * java -cp benchmarks/target/benchmarks.jar dev.stealing.benchmarks.report.ReportKt [--quick]
 * ```
 *
 * Method: every executor is created once and closed at the end. Rounds alternate the executors:
 * in each round every workload runs once on every executor, in an order rotated from round to
 * round, so drift of the machine (another build, thermal, GC state) hits all executors alike.
 * The first rounds are warm-up and are not counted; in each of them a workload is repeated on an
 * executor until at least half a second has passed, so that short workloads are warmed up too.
 * Before each workload's batch the heap is collected; between two runs the harness pauses
 * briefly so the previous pool's threads have parked and do not compete with the next one. Each run is timed with `System.nanoTime` on a
 * driver thread outside every pool and checked; a wrong result, an exception, or a run that
 * does not finish within the time limit is a failure: the report still gets written, and the
 * exit code is 1.
 *
 * Options: `--quick` (1 warm-up + 3 measured rounds, 3 s idle window), `--warmup N`,
 * `--rounds N`, `--idle-seconds N`, `--only REGEX` (workload ids), `--parallelism N` (threads of
 * every pool we create; `Dispatchers.Default` keeps its own; default: the available processors),
 * `--out DIR` (default `benchmarks/target/report`, or `target/report` when run inside
 * `benchmarks/`, so a run leaves the tracked files alone), `--update-committed` (write to
 * `benchmarks/results` instead, the copy the READMEs show and link),
 * `--jvms N` (default 1: run the whole report in N fresh JVMs one after another and pool their
 * measured rounds; see [MultiJvmReport]).
 */
fun main(args: Array<String>) {
    val options = try {
        Options.parse(args)
    } catch (e: IllegalArgumentException) {
        System.err.println("report: ${e.message}")
        System.err.println(Options.USAGE)
        exitProcess(2)
    }
    val code = try {
        if (options.jvms > 1) MultiJvmReport(options, args).run() else Report(options).run()
    } catch (e: Throwable) {
        System.err.println("report: failed: $e")
        e.printStackTrace()
        1
    }
    exitProcess(code)
}

class Options(
    val quick: Boolean,
    val warmupRounds: Int,
    val rounds: Int,
    val idleSeconds: Int,
    val only: Regex?,
    /** Threads of every pool the report creates (not `Dispatchers.Default`, which is shared). */
    val parallelism: Int,
    val outDir: File,
    /** Whether [outDir] is the committed `benchmarks/results` (`--update-committed`). */
    val updateCommitted: Boolean,
    val runLimitSeconds: Long,
    /** Fresh JVMs to run the report in, one after another; their measured rounds are pooled. */
    val jvms: Int,
    /** Set by [MultiJvmReport] for its child JVMs: where to write the raw samples. */
    val samplesOut: File?,
) {
    companion object {
        /** Writes the report into the committed `benchmarks/results` rather than `target/report`. */
        const val UPDATE_COMMITTED = "--update-committed"

        const val USAGE = "usage: ReportKt [--quick] [--warmup N] [--rounds N] [--idle-seconds N] [--only REGEX] [--parallelism N] [--out DIR | --update-committed] [--run-limit-seconds N] [--jvms N]"

        fun parse(args: Array<String>): Options {
            var quick = false
            var warmup: Int? = null
            var rounds: Int? = null
            var idle: Int? = null
            var only: Regex? = null
            var parallelism = ExecutorUnderTest.CORES
            var out: File? = null
            var updateCommitted = false
            var limit = 120L
            var jvms = 1
            var samplesOut: File? = null
            var i = 0
            fun value(name: String): String = args.getOrNull(++i) ?: throw IllegalArgumentException("$name needs a value")
            fun int(name: String, min: Int): Int {
                val v = value(name)
                val n = v.toIntOrNull() ?: throw IllegalArgumentException("$name must be an integer, was '$v'")
                require(n >= min) { "$name must be >= $min, was $n" }
                return n
            }
            while (i < args.size) {
                when (val a = args[i]) {
                    "--quick" -> quick = true
                    "--warmup" -> warmup = int(a, 0)
                    "--rounds" -> rounds = int(a, 1)
                    "--idle-seconds" -> idle = int(a, 0)
                    "--only" -> only = Regex(value(a))
                    "--parallelism" -> parallelism = int(a, 1)
                    "--out" -> out = File(value(a))
                    UPDATE_COMMITTED -> updateCommitted = true
                    "--run-limit-seconds" -> limit = int(a, 1).toLong()
                    "--jvms" -> jvms = int(a, 1)
                    MultiJvmReport.SAMPLES_OUT -> samplesOut = File(value(a))
                    "-h", "--help" -> { println(USAGE); exitProcess(0) }
                    else -> throw IllegalArgumentException("unknown argument '$a'")
                }
                i++
            }
            require(out == null || !updateCommitted) { "--out and $UPDATE_COMMITTED exclude each other" }
            // From the repository root or from inside benchmarks/.
            val benchmarks = if (File("benchmarks").isDirectory) File("benchmarks") else File(".")
            val defaultOut = if (updateCommitted) File(benchmarks, "results") else File(benchmarks, "target/report")
            return Options(
                quick = quick,
                warmupRounds = warmup ?: if (quick) 1 else 2,
                rounds = rounds ?: if (quick) 3 else 7,
                idleSeconds = idle ?: if (quick) 3 else 10,
                only = only,
                parallelism = parallelism,
                outDir = (out ?: defaultOut).normalize(),
                updateCommitted = updateCommitted,
                runLimitSeconds = limit,
                jvms = jvms,
                samplesOut = samplesOut,
            )
        }
    }
}
