package dev.stealing.project

import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldBeEmpty
import io.kotest.matchers.collections.shouldContainExactlyInAnyOrder
import io.kotest.matchers.collections.shouldNotBeEmpty
import io.kotest.matchers.shouldBe
import java.io.File

// Checks that keep the design notes and the code comments from drifting away from the code.
// Paths are relative to the module directory (dispatcher/), where Maven runs the tests, as in
// ReadmeSpec.

private val mainSources = File("src/main/kotlin")
private val designNote = File("../docs/design.md")

private fun mainKotlinFiles(): List<File> =
    mainSources.walkTopDown().filter { it.isFile && it.name.endsWith(".kt") }.sortedBy { it.path }.toList()

/** The lines of design.md from its "## Packages" heading up to the next "## " heading. */
private fun packagesSection(): List<String> {
    val lines = designNote.readLines()
    val start = lines.indexOfFirst { it.startsWith("## Packages") }
    check(start >= 0) { "docs/design.md has no \"## Packages\" section (the table of packages and their files)" }
    val end = lines.drop(start + 1).indexOfFirst { it.startsWith("## ") }.let { if (it < 0) lines.size else start + 1 + it }
    return lines.subList(start + 1, end)
}

/**
 * The text of the comment on [line], or null if it has none: everything after `//`, or the
 * whole line inside a block comment (a line starting with a block comment's opening or with
 * `*`). Approximate (a `//` inside a string literal would count), which is enough here.
 */
private fun commentText(line: String): String? {
    val trimmed = line.trimStart()
    if (trimmed.startsWith("/*") || trimmed.startsWith("*")) return trimmed
    val slashes = line.indexOf("//")
    return if (slashes >= 0) line.substring(slashes + 2) else null
}

/** Whether [line] is only a comment (so it can continue the comment of the line above). */
private fun isCommentLine(line: String): Boolean {
    val trimmed = line.trimStart()
    return trimmed.startsWith("//") || trimmed.startsWith("*") || trimmed.startsWith("/*")
}

/** `name()` in a comment: an identifier immediately followed by `()`, with its qualifier if any (`Worker.sleep()`). */
private val calledName = Regex("""(?:\b([A-Z][A-Za-z0-9_]*)\.)?\b([A-Za-z_][A-Za-z0-9_]*)\(\)""")

/**
 * Declared functions: `fun name(`, `fun <T> name(`, `fun X.name(`, `fun <T> X<T>.name(`, with any
 * modifiers before `fun` (private, inline, override, ...).
 */
private val funDeclaration = Regex("""\bfun\s+(?:<[^>]*>\s*)?(?:[A-Za-z_][A-Za-z0-9_<>?,* ]*\.)?([A-Za-z_][A-Za-z0-9_]*)\s*\(""")

/** Declared types, whose names may appear as `Name()` (a constructor call) in a comment. */
private val typeDeclaration = Regex("""\b(?:class|object|interface)\s+([A-Za-z_][A-Za-z0-9_]*)""")

/**
 * JDK or Kotlin functions that a "pairs with" comment may name although the main sources do not
 * declare them. Empty on purpose: today every such comment names a function of this library
 * (the JDK's side, e.g. `VarHandle.fullFence` or `getAcquire`, is written without `()`). Add a
 * name here only when a comment really pairs with a JDK call and says so with `()`; every name
 * added weakens the check, because a comment naming a moved function of ours with that name
 * would pass.
 */
private val jdkFunctions: Set<String> = emptySet()

private data class Mention(val file: String, val line: Int, val qualifier: String?, val name: String) {
    override fun toString(): String = "$file:$line: ${qualifier?.let { "$it." } ?: ""}$name()"
}

/**
 * Every name() mentioned by a "pairs with" comment in [sources] (path -> lines) that no source
 * declares: not as a function, not as a type (a constructor), and not on [jdkFunctions]; a
 * mention qualified with one of our types (`IdleControl.pushIdle()`) must be declared in that
 * type's file.
 */
private fun staleMentions(sources: Map<String, List<String>>): Pair<List<Mention>, List<Mention>> {
    // Where each function and type is declared.
    val functionFiles = HashMap<String, MutableSet<String>>()
    val typeFiles = HashMap<String, MutableSet<String>>()
    for ((file, lines) in sources) {
        for (line in lines) {
            if (isCommentLine(line)) continue // "the class of ..." in a KDoc declares nothing
            val code = line.substringBefore("//")
            funDeclaration.findAll(code).forEach { functionFiles.getOrPut(it.groupValues[1]) { HashSet() } += file }
            typeDeclaration.findAll(code).forEach { typeFiles.getOrPut(it.groupValues[1]) { HashSet() } += file }
        }
    }

    // The comment line that says "pairs with" and the comment line after it (the sentence often
    // continues there), with every name() they mention.
    val mentions = ArrayList<Mention>()
    for ((file, lines) in sources) {
        for (i in lines.indices) {
            val comment = commentText(lines[i]) ?: continue
            if (!comment.contains("pairs with", ignoreCase = true)) continue
            val scanned = listOf(i to comment) +
                (if (i + 1 < lines.size && isCommentLine(lines[i + 1])) listOf(i + 1 to commentText(lines[i + 1])!!) else emptyList())
            for ((index, text) in scanned) {
                calledName.findAll(text).forEach {
                    mentions += Mention(file, index + 1, it.groupValues[1].ifEmpty { null }, it.groupValues[2])
                }
            }
        }
    }

    fun declared(m: Mention): Boolean {
        if (m.name in jdkFunctions) return true
        val where = functionFiles[m.name] ?: typeFiles[m.name] ?: return false
        val owner = m.qualifier?.let { typeFiles[it] } ?: return true // unqualified, or not one of our types
        return where.any { it in owner }
    }

    val distinct = mentions.distinct()
    return distinct to distinct.filterNot(::declared)
}

private fun staleMessage(stale: List<Mention>): String =
    "These comments say what a memory access \"pairs with\" and name a function that the main sources do not " +
        "declare (or, when qualified as Type.name(), that Type's file does not declare). The function was " +
        "probably renamed or moved: point the comment at the function that now holds the other half of the " +
        "pair, so a reader checking the memory ordering can find it. file:line: name():\n" +
        stale.joinToString("\n")

/** GitHub's anchor for a Markdown heading: lower case, punctuation other than `-` and `_` dropped, spaces to `-`. */
private fun anchorOf(heading: String): String =
    heading.trim().lowercase().replace(Regex("[^\\p{L}\\p{N}_ -]"), "").replace(' ', '-')

/**
 * Every `[text](file.md#anchor)` or `[text](#anchor)` link in [docs] (path to text, paths
 * relative to the repository root) whose anchor is no heading of its target; "path: link".
 * A target outside [docs] is not checked.
 */
private fun brokenAnchors(docs: Map<String, String>): List<String> {
    val anchors = docs.mapValues { (_, text) ->
        Regex("^#+\\s+(.*)$", RegexOption.MULTILINE).findAll(text).map { anchorOf(it.groupValues[1]) }.toSet()
    }
    val broken = ArrayList<String>()
    for ((path, text) in docs) {
        for (m in Regex("\\]\\(([^)#\\s]*)#([^)\\s]+)\\)").findAll(text)) {
            val target = if (m.groupValues[1].isEmpty()) path else File(File(path).parent ?: ".", m.groupValues[1]).normalize().invariantSeparatorsPath
            val known = anchors[target] ?: continue
            if (m.groupValues[2] !in known) broken += "$path: ${m.value}"
        }
    }
    return broken
}

class DocsSpec : FunSpec({
    test("every #anchor link in the README and docs/ (investigations too) leads to a heading") {
        val root = File("..")
        val files = listOf(File(root, "README.md"), File(root, "benchmarks/README.md")) +
            File(root, "docs").walkTopDown().filter { it.isFile && it.name.endsWith(".md") }.toList()
        val docs = files.filter { it.isFile }.associate { it.relativeTo(root).invariantSeparatorsPath to it.readText() }
        docs.keys.contains("README.md") shouldBe true
        withClue("These links name a section that their target file does not have (renamed or removed heading?)") {
            brokenAnchors(docs).shouldBeEmpty()
        }
    }

    test("docs/performance.md holds current figures (at most 300 lines); dated headings only in docs/investigations/") {
        val root = File("..")
        val performance = File(root, "docs/performance.md").readLines()
        withClue("docs/performance.md has ${performance.size} lines: move an investigation to docs/investigations/") {
            (performance.size <= 300) shouldBe true
        }
        val dated = Regex("^#+\\s.*\\d{4}-\\d{2}-\\d{2}")
        val outside = listOf(File(root, "README.md"), File(root, "benchmarks/README.md")) +
            (File(root, "docs").listFiles { f -> f.name.endsWith(".md") }?.toList() ?: emptyList())
        val datedHeadings = outside.flatMap { f -> f.readLines().filter { dated.containsMatchIn(it) }.map { "${f.name}: $it" } }
        withClue("A dated heading is an investigation: give it a file of its own in docs/investigations/") {
            datedHeadings.shouldBeEmpty()
        }
    }

    test("self-check of the anchor scan on made-up files: it reports a link to a missing heading") {
        val docs = mapOf(
            "README.md" to "# Title\n## Results (2026-11-27)\nSee [r](#results-2026-11-27), [p](docs/p.md#the-flood), " +
                "[gone](docs/p.md#targets-not-met-on-jdk-17), [self](#nowhere), [ext](https://example.com/#x).",
            "docs/p.md" to "# P\n## The flood\nBack to [readme](../README.md#title).",
        )
        brokenAnchors(docs) shouldContainExactlyInAnyOrder listOf(
            "README.md: ](docs/p.md#targets-not-met-on-jdk-17)",
            "README.md: ](#nowhere)",
        )
    }

    test("the package table of docs/design.md lists every package and every source file in its package's row") {
        // package (as in the table's first column: `dev.stealing` or `internal.x`) -> its files
        val actual = mainKotlinFiles().groupBy(
            { it.parentFile.invariantSeparatorsPath.removePrefix("src/main/kotlin/").replace('/', '.').removePrefix("dev.stealing.") },
            { it.name },
        ).mapValues { it.value.toSet() }
        actual.keys.shouldNotBeEmpty()
        val rows = packagesSection().filter { it.startsWith("| `") }
        val listed = rows.associate { row ->
            val cells = row.split("|").map { it.trim() }
            val pkg = cells[1].removeSurrounding("`")
            pkg to Regex("`([A-Za-z0-9_]+\\.kt)`").findAll(cells[3]).map { it.groupValues[1] }.toSet()
        }
        withClue(
            "The \"## Packages\" table of docs/design.md must have one row per package of dispatcher/src/main/kotlin " +
                "(`dev.stealing` or `internal.<subsystem>`); packages: ${actual.keys.sorted()}, rows: ${listed.keys.sorted()}"
        ) { listed.keys shouldBe actual.keys }
        val wrong = actual.flatMap { (pkg, files) ->
            (files - listed.getValue(pkg)).map { "$pkg: $it is not in its row" } +
                (listed.getValue(pkg) - files).map { "$pkg: its row names $it, which the package does not have" }
        }
        withClue("Every source file belongs in its package's row (the files column), and only there") { wrong.shouldBeEmpty() }
    }

    test("every function that a \"pairs with\" comment names as name() is declared in the main sources") {
        val sources = mainKotlinFiles().associate { it.invariantSeparatorsPath.removePrefix("src/main/kotlin/") to it.readLines() }
        val (mentions, stale) = staleMentions(sources)
        mentions.shouldNotBeEmpty() // the scan itself works: the deque and the queues have such comments
        withClue(staleMessage(stale)) { stale.shouldBeEmpty() }
    }

    test("self-check of the scan above on a made-up source: it reports renamed and misplaced functions") {
        val sources = mapOf(
            "Deque.kt" to listOf(
                "class Deque {",
                "    fun push() { bottom = 1 } // pairs with the acquire in steal()",
                "    private inline fun <T> takeLast(x: T) = Unit",
                "    fun pop() {",
                "        // Store-load fence; pairs with the",
                "        // fence in stealOldest() and in Queue.offer().",
                "    }",
                "}",
            ),
            "Queue.kt" to listOf(
                "class Queue { fun offer(): Boolean = true } // pairs with Deque.offer() and Deque.takeLast(), Queue()",
                "fun Deque.steal() = Unit",
            ),
        )
        val (mentions, stale) = staleMentions(sources)
        mentions.map { it.toString() } shouldContainExactlyInAnyOrder listOf(
            "Deque.kt:2: steal()", "Deque.kt:6: stealOldest()", "Deque.kt:6: Queue.offer()",
            "Queue.kt:1: Deque.offer()", "Queue.kt:1: Deque.takeLast()", "Queue.kt:1: Queue()",
        )
        // stealOldest() was never declared; offer() is declared, but in Queue.kt, not Deque's file.
        stale.map { it.toString() } shouldContainExactlyInAnyOrder listOf("Deque.kt:6: stealOldest()", "Queue.kt:1: Deque.offer()")
    }
})
