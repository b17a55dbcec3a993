package dev.stealing.project

import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldBeEmpty
import io.kotest.matchers.collections.shouldContainExactlyInAnyOrder
import io.kotest.matchers.shouldBe
import java.io.File

// Figures with one source: every ratio that README.md (and the docs it sends readers to) quotes
// must be the one in the committed comparison reports, benchmarks/results/report.md (JDK 17) and
// benchmarks/results/report-temurin25.md (Temurin 25). When a report is regenerated, this test
// names every quote that no longer matches. Paths are relative to the module directory
// (dispatcher/), where Maven runs the tests, as in ReadmeSpec and DocsSpec.
//
// The convention the documents follow, and this test enforces:
//
// 1. README.md has exactly one results table (the one table whose header has "x Default"), under
//    "## Results", with the columns
//      | workload (report row) | ours | JDK 17: x Default | x FJP | Temurin 25: x Default | x FJP |
//    Each row names its report row: the report's workload text verbatim, and our executor as the
//    report names it (in backticks). Each of the four figures must equal, character for character
//    (bold markers aside), the "x Default" or "x FJP" cell of that row in report.md (JDK 17) or
//    report-temurin25.md (Temurin 25); "-" matches "-".
// 2. Anywhere else in README.md, docs/java.md, docs/observability.md, docs/options.md and docs/pekko.md (outside
//    code blocks and code spans), a ratio is written as a link to the report it comes from (one of
//    the full reports, or a committed report of some rows, such as benchmarks/results/loops.md),
//    whose text is the figure and whose title names the cell:
//      [0.12 x](benchmarks/results/report.md "x Default, stealing-forkjoin, fib(27), async per node")
//    The title is "<column>, <executor>, <workload prefix>": column "x Default" or "x FJP" (the
//    figure must equal that cell) or "target" (the figure must be one of the numbers in the row's
//    target cell, e.g. "<= 0.50 x STPE (0.28)"); the executor as the report names it; and the
//    start of the workload text, which must pick exactly one workload of that report.
// 3. Any other ratio is an error: a decimal number followed by "x" or " x" ("0.12 x", "1.4x") or
//    an integer immediately followed by "x" ("8x"). An integer, a space and "x" is a size
//    ("10,000 x 100"), not a ratio. Quote ratios with the decimals the report prints.
// 4. README.md has at most 300 lines.

private val root = File("..")
private val reportPaths = mapOf(
    "JDK 17" to "benchmarks/results/report.md",
    "Temurin 25" to "benchmarks/results/report-temurin25.md",
)

/** The documents whose quoted ratios are checked (paths relative to the repository root). */
private val quotingDocs = listOf("README.md", "docs/java.md", "docs/observability.md", "docs/options.md", "docs/pekko.md")

/** One row of a report's main table: workload and executor, and every cell by its column's header. */
internal data class ReportRow(val workload: String, val executor: String, val cells: Map<String, String>)

private fun cellsOf(line: String): List<String> = line.trim().removePrefix("|").removeSuffix("|").split("|").map { it.trim() }

/** The rows of the report's table whose header starts with `| workload | executor |`. */
internal fun parseReport(text: String): List<ReportRow> {
    val lines = text.lines()
    val start = lines.indexOfFirst { it.startsWith("| workload | executor |") }
    check(start >= 0) { "the report has no table headed \"| workload | executor | ...\"" }
    val header = cellsOf(lines[start])
    return lines.drop(start + 2).takeWhile { it.startsWith("|") }.map { line ->
        val cells = cellsOf(line)
        check(cells.size == header.size) { "a report row has ${cells.size} cells, its header ${header.size}: $line" }
        ReportRow(cells[0], cells[1], header.zip(cells).toMap())
    }
}

private val readmeTableHeader = listOf("workload (report row)", "ours", "JDK 17: x Default", "x FJP", "Temurin 25: x Default", "x FJP")

/** Rule 1: the README's results table against the reports; one message per problem. */
internal fun resultsTableProblems(readme: String, reports: Map<String, List<ReportRow>>): List<String> {
    val lines = readme.lines()
    val headers = lines.indices.filter { lines[it].startsWith("|") && lines[it].contains("x Default") }
    if (headers.size != 1) return listOf("README.md has ${headers.size} tables with an \"x Default\" column; it has exactly one results table")
    val at = headers.single()
    if (cellsOf(lines[at]) != readmeTableHeader) {
        return listOf("README.md:${at + 1}: the results table's header is ${cellsOf(lines[at])}, not $readmeTableHeader")
    }
    val problems = ArrayList<String>()
    val rows = lines.drop(at + 2).takeWhile { it.startsWith("|") }
    if (rows.isEmpty()) problems += "README.md:${at + 1}: the results table has no rows"
    rows.forEachIndexed { i, line ->
        val where = "README.md:${at + 3 + i}"
        val cells = cellsOf(line).map { it.replace("**", "").trim() }
        if (cells.size != readmeTableHeader.size) {
            problems += "$where: ${cells.size} cells, not ${readmeTableHeader.size}: $line"
            return@forEachIndexed
        }
        val workload = cells[0]
        val executor = cells[1].removeSurrounding("`")
        for ((jdkIndex, jdk) in reportPaths.keys.withIndex()) {
            val matches = reports.getValue(jdk).filter { it.workload == workload && it.executor == executor }
            if (matches.size != 1) {
                problems += "$where: ${reportPaths[jdk]} has ${matches.size} rows with workload \"$workload\" and executor $executor (the row must name exactly one)"
                continue
            }
            for ((columnIndex, column) in listOf("x Default", "x FJP").withIndex()) {
                val quoted = cells[2 + 2 * jdkIndex + columnIndex]
                val actual = matches.single().cells.getValue(column)
                if (quoted != actual) problems += "$where: \"$workload\" / $executor, $jdk $column: README says $quoted, ${reportPaths[jdk]} says $actual"
            }
        }
    }
    return problems
}

private val citation = Regex("""\[(\d+(?:\.\d+)?) ?x]\(([^)\s]+) "([^"]*)"\)""")
private val bareRatio = Regex("""(?<![\w.,])(\d+\.\d+ ?x|\d+x)(?![\w])""")

/** Line number (1-based) of [index] in [text]. */
private fun lineOf(text: String, index: Int): Int = text.substring(0, index).count { it == '\n' } + 1

/** [text] with the characters of [range] replaced by spaces (line breaks kept, so line numbers stay). */
private fun mask(text: String, range: IntRange): String =
    text.substring(0, range.first) + text.substring(range).map { if (it == '\n') '\n' else ' ' }.joinToString("") + text.substring(range.last + 1)

/**
 * Rules 2 and 3 for one document at [path] (relative to the repository root): each cited ratio
 * against its report cell, and every ratio left uncited. [reportRows] maps a report's path
 * (relative to the root) to its rows.
 */
internal fun quotedRatioProblems(path: String, text: String, reportRows: Map<String, List<ReportRow>>): List<String> {
    val problems = ArrayList<String>()
    var rest = text
    for (m in citation.findAll(text)) {
        val where = "$path:${lineOf(text, m.range.first)}"
        rest = mask(rest, m.range)
        val (figure, link, title) = m.destructured
        val target = File(File(path).parent ?: ".", link).normalize().invariantSeparatorsPath
        val rows = reportRows[target]
        if (rows == null) {
            problems += "$where: ${m.value} links to $target, which is not one of the reports ${reportRows.keys}"
            continue
        }
        val parts = title.split(", ", limit = 3)
        if (parts.size != 3 || parts[0] !in setOf("x Default", "x FJP", "target")) {
            problems += "$where: ${m.value}: its title must be \"<x Default | x FJP | target>, <executor>, <workload prefix>\""
            continue
        }
        val (column, executor, prefix) = parts
        val workloads = rows.filter { it.executor == executor && it.workload.startsWith(prefix) }.map { it.workload }.distinct()
        if (workloads.size != 1) {
            problems += "$where: ${m.value}: $target has ${workloads.size} workloads starting with \"$prefix\" for executor $executor ${workloads} (name exactly one)"
            continue
        }
        val row = rows.single { it.executor == executor && it.workload == workloads.single() }
        val ok = if (column == "target") {
            Regex("""\d+\.\d+""").findAll(row.cells["target"] ?: "").any { it.value == figure }
        } else {
            row.cells[column] == figure
        }
        if (!ok) {
            val actual = if (column == "target") "its target cell is \"${row.cells["target"]}\"" else "it says ${row.cells[column]}"
            problems += "$where: quotes $figure ($column of \"${row.workload}\" / $executor in $target); $actual"
        }
    }
    // Code blocks, code spans and the README's results table (checked by rule 1) hold no quotes.
    for (block in Regex("```.*?```", RegexOption.DOT_MATCHES_ALL).findAll(rest).toList().reversed()) rest = mask(rest, block.range)
    for (span in Regex("`[^`\n]*`").findAll(rest).toList().reversed()) rest = mask(rest, span.range)
    if (path == "README.md") {
        val lines = rest.lines()
        val header = lines.indexOfFirst { it.startsWith("|") && it.contains("x Default") }
        if (header >= 0) {
            val end = header + lines.drop(header).takeWhile { it.startsWith("|") }.size
            rest = lines.mapIndexed { i, l -> if (i in header until end) " ".repeat(l.length) else l }.joinToString("\n")
        }
    }
    for (m in bareRatio.findAll(rest)) {
        problems += "$path:${lineOf(rest, m.range.first)}: \"${m.value}\" is a ratio that names no report row: " +
            "write it as [${m.value.removeSuffix("x").trim()} x](<report> \"<column>, <executor>, <workload prefix>\") or put it in the results table"
    }
    return problems
}

/**
 * Every committed report a quote may cite: the two full reports, and the reports of a part of
 * the rows (`--only`, e.g. `message-passing.md`, `loops.md`), each with the same table.
 */
private fun committedReports(): Map<String, List<ReportRow>> =
    (File(root, "benchmarks/results").listFiles { f -> f.name.endsWith(".md") } ?: emptyArray())
        .filter { f -> f.readLines().any { it.startsWith("| workload | executor |") } }
        .map { "benchmarks/results/${it.name}" }
        .plus(reportPaths.values)
        .distinct()
        .associateWith { parseReport(File(root, it).readText()) }

class FiguresSpec : FunSpec({
    test("README.md has at most 300 lines") {
        val lines = File(root, "README.md").readLines().size
        withClue("README.md has $lines lines: move the longer material to docs/") { (lines <= 300) shouldBe true }
    }

    test("every figure of the README's results table is the one in the committed report") {
        val byPath = committedReports()
        val byJdk = reportPaths.mapValues { (_, path) -> byPath.getValue(path) }
        withClue("The results table of README.md differs from benchmarks/results/ (regenerated report? copy its figures)") {
            resultsTableProblems(File(root, "README.md").readText(), byJdk).shouldBeEmpty()
        }
    }

    test("every ratio quoted in the README and docs/java.md, observability.md, options.md names its report cell and matches it") {
        val reports = committedReports()
        val problems = quotingDocs.filter { File(root, it).isFile }.flatMap { quotedRatioProblems(it, File(root, it).readText(), reports) }
        withClue("These ratios differ from the committed report they cite, or cite none (convention: top of FiguresSpec.kt)") {
            problems.shouldBeEmpty()
        }
    }

    test("self-check on made-up files: a wrong figure, a wrong citation and a bare ratio are each reported") {
        val report = """
            |# report
            || workload | executor | median | min - max | x Default | x FJP | target |
            || --- | --- | ---: | ---: | ---: | ---: | --- |
            || fib(27), async per node (await) | stealing | 9 ms | 8 - 10 | 0.12 | 0.15 | <= 0.50 x STPE (0.28): met |
            || fib(27), fork/join | stealing | 9 ms | 8 - 10 | - | 1.37 |  |
            || fib(27), fork/join | fjp | 9 ms | 8 - 10 | - | 1.00 |  |
            """.trimMargin()
        val rows = parseReport(report)
        rows.map { it.workload to it.executor } shouldBe listOf(
            "fib(27), async per node (await)" to "stealing", "fib(27), fork/join" to "stealing", "fib(27), fork/join" to "fjp",
        )
        val readme = """
            |## Results
            || workload (report row) | ours | JDK 17: x Default | x FJP | Temurin 25: x Default | x FJP |
            ||---|---|---|---|---|---|
            || fib(27), async per node (await) | `stealing` | **0.12** | 0.15 | 0.13 | 0.15 |
            || fib(27), fork/join | `stealing` | - | 1.37 | - | 1.37 |
            |
            |Fast: [0.12 x](benchmarks/results/report.md "x Default, stealing, fib(27), async"), [0.28 x](benchmarks/results/report.md "target, stealing, fib(27), async"),
            |[0.21 x](benchmarks/results/report.md "x FJP, stealing, fib(27), fork/join"), [1.37 x](benchmarks/results/report.md "x FJP, stealing, fib(27)"),
            |about 1.4x or 0.5 x elsewhere, `2.5x` in code, fan-out 10,000 x 100.
            """.trimMargin()
        resultsTableProblems(readme, mapOf("JDK 17" to rows, "Temurin 25" to rows)) shouldContainExactlyInAnyOrder listOf(
            "README.md:4: \"fib(27), async per node (await)\" / stealing, Temurin 25 x Default: README says 0.13, benchmarks/results/report-temurin25.md says 0.12",
        )
        quotedRatioProblems("README.md", readme, mapOf("benchmarks/results/report.md" to rows)) shouldContainExactlyInAnyOrder listOf(
            "README.md:8: quotes 0.21 (x FJP of \"fib(27), fork/join\" / stealing in benchmarks/results/report.md); it says 1.37",
            "README.md:8: [1.37 x](benchmarks/results/report.md \"x FJP, stealing, fib(27)\"): benchmarks/results/report.md has 2 workloads " +
                "starting with \"fib(27)\" for executor stealing [fib(27), async per node (await), fib(27), fork/join] (name exactly one)",
            "README.md:9: \"1.4x\" is a ratio that names no report row: write it as [1.4 x](<report> \"<column>, <executor>, <workload prefix>\") or put it in the results table",
            "README.md:9: \"0.5 x\" is a ratio that names no report row: write it as [0.5 x](<report> \"<column>, <executor>, <workload prefix>\") or put it in the results table",
        )
    }
})
