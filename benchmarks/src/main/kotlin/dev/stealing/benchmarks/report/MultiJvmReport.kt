package dev.stealing.benchmarks.report

import java.io.File
import java.lang.management.ManagementFactory
import java.nio.file.Files

/**
 * The report run in several fresh JVMs (`--jvms N`), one after another, with the measured rounds
 * of all of them pooled into one table.
 *
 * Why: on the 2-vCPU machines this project is measured on, the spread *between* JVMs is larger
 * than the spread between rounds of one JVM. How the JIT compiles a recursive fork/join or
 * coroutine loop differs from one JVM to the next (inlining decisions, profiles), and now and
 * then a JVM runs one executor at half speed for its whole life. One JVM then decides the
 * figure. Pooling the rounds of several JVMs gives medians that a single unlucky JVM cannot move
 * much, and the min - max column shows such a JVM when there was one.
 *
 * Each child is this same program with the same arguments and JVM flags, minus `--jvms`, with its
 * own scratch `--out` directory (never `--update-committed`) and [SAMPLES_OUT] naming a file where it writes its raw samples,
 * idle figures and failures ([writeSamples]). Children print their progress as usual. The parent
 * then writes the one report from the pooled samples, into the `--out` directory it was given.
 * Idle CPU is the median of the children's figures; a child's failures are the report's failures.
 */
class MultiJvmReport(private val options: Options, private val args: Array<String>) {

    fun run(): Int {
        val started = System.currentTimeMillis()
        val workloads = Report(options).workloads
        require(workloads.isNotEmpty()) { "--only ${options.only} matches no workload" }
        val samples = LinkedHashMap<Pair<String, String>, MutableList<Double>>()
        val idle = HashMap<String, MutableList<Double>>()
        val failures = ArrayList<String>()
        val scratch = Files.createTempDirectory("stealing-report").toFile()
        try {
            for (k in 1..options.jvms) {
                println("=== JVM $k of ${options.jvms}")
                val out = File(scratch, "jvm-$k")
                val file = File(scratch, "samples-$k.tsv")
                val code = ProcessBuilder(command(out, file)).inheritIO()
                    .apply { environment()[JVM_LABEL_ENV] = "JVM $k of ${options.jvms}" }.start().waitFor()
                if (!file.isFile) {
                    failures += "JVM $k exited with code $code and wrote no samples"
                    continue
                }
                readSamples(file, k, samples, idle, failures)
                if (code != 0 && failures.none { it.startsWith("JVM $k:") }) failures += "JVM $k exited with code $code"
            }
        } finally {
            scratch.deleteRecursively()
        }
        val elapsed = (System.currentTimeMillis() - started) / 1000.0
        ReportOutput(options, workloads, samples, idle.mapValues { ReportOutput.median(it.value) }, failures, elapsed).printAndWrite()
        if (failures.isNotEmpty()) {
            System.err.println("${failures.size} failure(s):")
            failures.forEach { System.err.println("  $it") }
            return 1
        }
        return 0
    }

    /** This program again, with this JVM's flags and class path, the same arguments minus `--jvms`, `--out` and `--update-committed`. */
    private fun command(out: File, samplesFile: File): List<String> {
        val java = File(System.getProperty("java.home"), "bin/java").path
        val jvmFlags = ManagementFactory.getRuntimeMXBean().inputArguments
        val rest = ArrayList<String>()
        var i = 0
        while (i < args.size) {
            when (args[i]) {
                "--jvms", "--out", SAMPLES_OUT -> i++ // and its value
                Options.UPDATE_COMMITTED -> {} // each child writes to its own scratch --out
                else -> rest += args[i]
            }
            i++
        }
        return listOf(java) + jvmFlags + listOf("-cp", System.getProperty("java.class.path"), MAIN_CLASS) +
            rest + listOf("--out", out.path, SAMPLES_OUT, samplesFile.path)
    }

    private fun readSamples(
        file: File,
        jvm: Int,
        samples: MutableMap<Pair<String, String>, MutableList<Double>>,
        idle: MutableMap<String, MutableList<Double>>,
        failures: MutableList<String>,
    ) {
        for (line in file.readLines()) {
            val f = line.split('\t')
            when (f[0]) {
                "sample" -> samples.getOrPut(f[1] to f[2]) { ArrayList() }.add(f[3].toDouble())
                "idle" -> idle.getOrPut(f[1]) { ArrayList() }.add(f[2].toDouble())
                "failure" -> failures += "JVM $jvm: ${f[1]}"
                else -> failures += "JVM $jvm: unreadable sample line '$line'"
            }
        }
    }

    companion object {
        /** The environment variable that tells a child JVM which of the runs it is, for its [Progress] line. */
        const val JVM_LABEL_ENV = "STEALING_REPORT_JVM"

        /** The option through which a parent tells a child where to write its samples. */
        const val SAMPLES_OUT = "--samples-out"
        private const val MAIN_CLASS = "dev.stealing.benchmarks.report.ReportKt"

        /** A child's side: its samples, idle figures and failures, one tab-separated record per line. */
        fun writeSamples(file: File, samples: Map<Pair<String, String>, List<Double>>, idle: Map<String, Double>, failures: List<String>) {
            file.printWriter().use { w ->
                for ((key, values) in samples) for (v in values) w.println("sample\t${key.first}\t${key.second}\t$v")
                for ((id, v) in idle) w.println("idle\t$id\t$v")
                for (f in failures) w.println("failure\t${f.replace('\t', ' ').replace('\n', ' ')}")
            }
        }
    }
}
