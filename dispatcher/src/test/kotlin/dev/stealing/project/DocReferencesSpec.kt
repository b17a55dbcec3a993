package dev.stealing.project

import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldBeEmpty
import io.kotest.matchers.collections.shouldContainExactlyInAnyOrder
import io.kotest.matchers.ints.shouldBeGreaterThan
import java.io.File

// Every code reference of the living docs must name something the code still has: backticked
// `Class`, `Class.member` and repository paths, and the targets of Markdown links. The docs
// drift after every refactor (a function moves to another class, a file is split); this finds
// the names left behind, with the doc's file and line. docs/investigations/ is not checked:
// those are dated records, written once and never updated. Paths are relative to dispatcher/,
// where Maven runs the tests.

private val repositoryRoot = File("..")

/** The docs kept up to date with the code, relative to the repository root. */
private fun livingDocs(): List<String> =
    (listOf("README.md", "benchmarks/README.md", "samples/README.md", "samples/apps/README.md") +
        (File(repositoryRoot, "docs").listFiles { f -> f.isFile && f.name.endsWith(".md") }?.map { "docs/${it.name}" } ?: emptyList()))
        .filter { File(repositoryRoot, it).isFile }.sorted()

/** Every file and directory of the repository (relative, `/`-separated), without `.git` and build output. */
private fun repositoryPaths(): Set<String> =
    repositoryRoot.walkTopDown().onEnter { it.name != ".git" && it.name != "target" && it.name != "node_modules" }
        .filter { it != repositoryRoot }.map { it.relativeTo(repositoryRoot).invariantSeparatorsPath }.toSet()

/**
 * Names of the JDK, Kotlin, kotlinx.coroutines and Micrometer that the docs mention (to compare
 * with, or because the pool implements or calls them). A backticked `Class` or `Class.member`
 * that our sources do not declare is looked up in these packages by reflection, member included,
 * so a misspelt `ForkJoinPool.managedBlok` fails as well. A package is here because the docs
 * name classes of it; keep the list short: a name of ours that moved away could pass if one of
 * these packages happens to have a class of that name.
 */
private val foreignPackages = listOf(
    "java.lang", // Thread.yield, System.nanoTime, Runnable, the exceptions and errors
    "java.lang.invoke", // VarHandle.fullFence: the fences that the memory-ordering notes pair with
    "java.util", // Arrays.sort, Comparator, RandomAccess: the baselines of the parallel sorts and loops
    "java.util.concurrent", // ForkJoinPool, CompletableFuture, ExecutorService...: what the pool is compared to and implements
    "java.util.concurrent.atomic", // LongAdder: the counter of forks from outside the pool
    "java.util.concurrent.locks", // LockSupport.park: how workers park
    "java.util.stream", // IntStream.collect: the Java loop baselines
    "com.sun.management", // OperatingSystemMXBean.processCpuTime: the CPU time the benchmarks report
    "kotlin.coroutines", // Continuation
    "kotlin.time", // Duration.ZERO, Duration.INFINITE: keep-alive and timer arguments
    "kotlinx.coroutines", // Dispatchers.Default, Job, Deferred, CoroutineDispatcher, internals the pool replaces (DispatchedTask)
    "kotlinx.coroutines.sync", // Mutex: the affinity benchmark's baseline
    "io.micrometer.core.instrument.binder", // MeterBinder, which StealingMetrics implements
    "io.micrometer.core.instrument.binder.jvm", // ExecutorServiceMetrics, whose meter names StealingMetrics keeps
)

/**
 * Foreign names that reflection cannot check, each with the reason: Kotlin's built-in types have
 * no class of that name on the JVM, an extension function is no member of its receiver, and a
 * few names are of other platforms or no class at all.
 */
private val foreignNames: Map<String, String> = mapOf(
    "Int" to "kotlin.Int is the JVM's int (Int.MAX_VALUE)",
    "Any" to "kotlin.Any is java.lang.Object",
    "Array" to "kotlin.Array is a JVM array; the sorts compare with Array.sortWith",
    "LongArray" to "a JVM long[], the array the sorts and reductions take",
    "DoubleArray" to "a JVM double[]",
    "List.map" to "the Kotlin standard library's extension, the sequential baseline of parallelMap",
    "ExecutorService.close()" to "added in JDK 19; the build runs on JDK 17 too",
    "NaN" to "the double value a meter reads once its pool is garbage: a value, not a class",
    "Wait" to ".NET's Task.Wait, which runs the awaited task inline (docs/inlining.md compares)",
    "Remove" to "the operation of Duffy's thread-pool series that wait-inlining needs (docs/deque.md)",
    // Apache Pekko's API, which docs/pekko.md names; Pekko is on the pekko module's class path, not this one's.
    "Props.withDispatcher" to "Pekko's classic actor Props (org.apache.pekko.actor)",
    "DispatcherSelector.fromConfig" to "Pekko's typed dispatcher selection (org.apache.pekko.actor.typed)",
    "LoadMetrics" to "Pekko's interface for executors that report saturation (org.apache.pekko.dispatch)",
    "BalancingDispatcher" to "Pekko's work-sharing dispatcher (org.apache.pekko.dispatch)",
    "NonFatal" to "Scala's matcher of non-fatal throwables (scala.util.control), on the pekko module's class path",
    // kotlinx.coroutines' own JMH benchmarks, whose shapes the channel rows follow (its repository's benchmarks/, not a published jar).
    "SemaphoreBenchmark" to "kotlinx.coroutines' semaphore benchmark (benchmarks/src/jmh in its repository)",
    "ChannelProducerConsumerBenchmark" to "kotlinx.coroutines' channel benchmark (benchmarks/src/jmh in its repository)",
    "Blackhole.consumeCPU" to "JMH's unit of CPU work (org.openjdk.jmh.infra), on the benchmarks module's class path, not this one's",
)

/** One reference in a doc: its file, line and the text between the backticks (or the link's target). */
private data class DocReference(val doc: String, val line: Int, val text: String) {
    override fun toString(): String = "$doc:$line: $text"
}

/** `Class`, `Class<T>`, `Class?`, `Class(args)`, `Class.member`, `Class.member(args)`, `Class.member.more`. */
private val classReference = Regex("""^([A-Z][A-Za-z0-9_]*)(?:<[^>]*>)?\??(?:\.([A-Za-z_][A-Za-z0-9_]*))?(?:\(.*\))?(?:\..*)?$""")

/** A repository path: with a `/`, or a file name with a known extension. No spaces, no `=`. */
private val pathReference = Regex("""^[\w.-]*(/[\w.-]*)+$|^[\w.-]+\.(kt|java|md|xml|json|csv|png|txt|api|properties|sh)$""")

/** The backticked texts and link targets of [text], outside fenced code blocks, with their line numbers. */
private fun referencesOf(doc: String, text: String): Pair<List<DocReference>, List<DocReference>> {
    val backticked = ArrayList<DocReference>()
    val links = ArrayList<DocReference>()
    var fenced = false
    text.lines().forEachIndexed { i, line ->
        if (line.trimStart().startsWith("```")) { fenced = !fenced; return@forEachIndexed }
        if (fenced) return@forEachIndexed
        Regex("`([^`]+)`").findAll(line).forEach { backticked += DocReference(doc, i + 1, it.groupValues[1].trim()) }
        Regex("""\]\(([^)\s]+)\)""").findAll(line.replace(Regex("`[^`]*`"), ""))
            .map { it.groupValues[1] }.filterNot { it.startsWith("#") || Regex("^[a-z]+:").containsMatchIn(it) }
            .forEach { links += DocReference(doc, i + 1, it.substringBefore('#')) }
    }
    return backticked to links
}

/**
 * [code] with the contents of its string and character literals blanked out (same length), so
 * that a `{` of a string template or a "class X" inside a string declares and opens nothing.
 */
private fun blankLiterals(code: String): String =
    Regex("\"\"\"[\\s\\S]*?\"\"\"|\"(?:\\\\.|[^\"\\\\\n])*\"|'(?:\\\\.|[^'\\\\\n])'").replace(code) { m ->
        val quote = if (m.value.startsWith("\"\"\"")) "\"\"\"" else m.value.substring(0, 1)
        quote + " ".repeat(m.value.length - 2 * quote.length) + quote
    }

/**
 * For each position of [code] (Kotlin without comments), whether a declaration there is a member
 * (or top-level): true at the top level and directly inside a class, object or interface body,
 * false inside a function body or a lambda, where a `val` is a local.
 */
private fun memberContexts(code: String): BooleanArray {
    val result = BooleanArray(code.length + 1)
    val stack = ArrayList<Boolean>()
    var statementStart = 0
    for (i in code.indices) {
        result[i] = stack.lastOrNull() ?: true
        when (code[i]) {
            '{' -> {
                val header = Regex("""\b(class|object|interface|fun)\b""").findAll(code.substring(statementStart, i)).lastOrNull()
                stack += header != null && header.value != "fun"
                statementStart = i + 1
            }
            '}' -> { stack.removeLastOrNull(); statementStart = i + 1 }
            ';' -> statementStart = i + 1
        }
    }
    result[code.length] = stack.lastOrNull() ?: true
    return result
}

/** What our sources declare: types (with their files), each file's members, extensions per receiver, supertypes. */
private class Declarations(sources: Map<String, String>) {
    val typeFiles = HashMap<String, MutableSet<String>>()
    val fileMembers = HashMap<String, MutableSet<String>>()
    val extensions = HashMap<String, MutableSet<String>>()
    val supertypes = HashMap<String, MutableSet<String>>()

    init {
        for ((path, text) in sources) {
            val members = fileMembers.getOrPut(path) { HashSet() }
            val code = text.lines().filterNot { it.trimStart().let { t -> t.startsWith("*") || t.startsWith("/*") || t.startsWith("//") } }
                .joinToString("\n") { it.substringBefore("//") }.let(::blankLiterals)
            for (m in Regex("""\b(?:class|object|interface|typealias|enum|record)\s+([A-Z][A-Za-z0-9_]*)([^{]*)""").findAll(code)) {
                typeFiles.getOrPut(m.groupValues[1]) { HashSet() } += path
                members += m.groupValues[1]
                // `class X(...) : A(), B by b` or `class X extends A implements B`: the names of the supertypes
                val header = m.groupValues[2]
                val supers = Regex("""^\s*(?:<[^>]*>)?[^:(]*(?:\(.*\))?\s*:\s*(.*)$""", RegexOption.DOT_MATCHES_ALL).find(header)?.groupValues?.get(1)
                    ?: Regex("""\b(?:extends|implements)\s+(.*)$""", RegexOption.DOT_MATCHES_ALL).find(header)?.groupValues?.get(1) ?: ""
                Regex("""(?:^|,|implements)\s*([A-Z]\w*)""").findAll(supers).forEach { supertypes.getOrPut(m.groupValues[1]) { HashSet() } += it.groupValues[1] }
            }
            if (path.endsWith(".kt")) {
                // A file of top-level functions is named for what it does (`StopSteals`, `Rejection`); its facade class is XKt.
                val base = path.substringAfterLast('/').removeSuffix(".kt")
                val facade = Regex("""@file:JvmName\("(\w+)"\)""").find(text)?.groupValues?.get(1) ?: (base + "Kt")
                for (name in setOf(base, facade)) typeFiles.getOrPut(name) { HashSet() } += path
                val memberContext = memberContexts(code)
                // fun / val / var, with type parameters and an extension receiver (kept, without its own type arguments)
                for (m in Regex("""\b(?:fun|val|var)\s+(?:<[^>]*>\s*)?(?:([A-Za-z_][\w<>?,* ]*?)\.)?(`?)([A-Za-z_]\w*)\2\s*[(:=<\n{]""").findAll(code)) {
                    if (!memberContext[m.range.first]) continue // a local
                    members += m.groupValues[3]
                    val receiver = m.groupValues[1].substringBefore('<').trim().trimEnd('?')
                    if (receiver.isNotEmpty()) extensions.getOrPut(receiver) { HashSet() } += m.groupValues[3]
                }
                // enum entries: the names between an enum class's opening brace and its first `;` or `}`
                for (m in Regex("""\benum\s+class\s+\w+[^{]*\{([^;}]*)""").findAll(code)) {
                    Regex("""(?:^|,)\s*(?:@\w+\s*)?([A-Za-z_]\w*)""").findAll(m.groupValues[1]).forEach { members += it.groupValues[1] }
                }
            } else {
                // Java: methods, fields and constants (a type or modifier, then the name, then `(`, `=` or `;`)
                Regex("""[\w>\]]\s+([A-Za-z_]\w*)\s*[(=;]""").findAll(code).forEach { members += it.groupValues[1] }
                Regex("""\benum\s+\w+\s*\{([^;}]*)""").findAll(code).forEach { e ->
                    Regex("""(?:^|,)\s*([A-Za-z_]\w*)""").findAll(e.groupValues[1]).forEach { members += it.groupValues[1] }
                }
            }
        }
    }

    /** Whether our [type] (its files, its extensions, its supertypes of ours) declares [member]. */
    private fun declares(type: String, member: String, seen: MutableSet<String> = HashSet()): Boolean {
        if (!seen.add(type)) return false
        val files = typeFiles[type] ?: return false
        return files.any { member in fileMembers.getValue(it) } || extensions[type]?.contains(member) == true ||
            supertypes[type].orEmpty().any { declares(it, member, seen) }
    }

    /** Null if `Class` or `Class.member` resolves, in our sources or else as a foreign name; else why not. */
    fun check(type: String, member: String?): String? {
        val files = typeFiles[type]
        if (files == null) {
            if (member != null && extensions[type]?.contains(member) == true) return null // our extension on a foreign type
            return foreignCheck(type, member)
        }
        if (member == null || declares(type, member)) return null
        // Java's view of a Kotlin property: StealingDispatcher.getShared() is the companion's `shared`
        val property = Regex("^(?:get|set|is)([A-Z]\\w*)$").find(member)?.groupValues?.get(1)
        if (property != null && (declares(type, property.replaceFirstChar { it.lowercase() }))) return null
        return "$member is declared neither in ${files.sorted().joinToString { it.substringAfterLast('/') }}, " +
            "nor as an extension of $type, nor in its supertypes"
    }
}

private val kotlinToJava = mapOf("Int" to "Integer", "Any" to "Object", "Char" to "Character")

/** Null if [type] (and [member]) is a class of [foreignPackages] or in [foreignNames]; else why not. */
private fun foreignCheck(type: String, member: String?): String? {
    if (member == null && type in foreignNames) return null
    if (member != null && ("$type.$member" in foreignNames || "$type.$member()" in foreignNames)) return null
    val loader = DocReferencesSpec::class.java.classLoader
    val classes = foreignPackages.mapNotNull { runCatching { Class.forName("$it.${kotlinToJava[type] ?: type}", false, loader) }.getOrNull() }
    if (classes.isEmpty()) return "no class $type in our sources, nor in the foreign packages or names"
    if (member == null) return null
    val cap = member.replaceFirstChar { it.uppercase() }
    fun Class<*>.has(): Boolean =
        (methods.asSequence() + declaredMethods.asSequence()).any { it.name.substringBefore('-') in setOf(member, "get$cap", "is$cap") } ||
            (fields.asSequence() + declaredFields.asSequence()).any { it.name == member } ||
            declaredClasses.any { it.simpleName == member }
    if (classes.any { c -> c.has() || c.declaredClasses.any { it.simpleName == "Companion" && it.has() } }) return null
    return "${classes.joinToString { it.name }} has no member $member"
}

/** The references of [docs] (path to text) that do not resolve, as "doc:line: `text`: why". */
private fun staleReferences(docs: Map<String, String>, sources: Map<String, String>, paths: Set<String>): List<String> {
    val declarations = Declarations(sources)
    val stale = ArrayList<String>()
    fun pathExists(doc: String, path: String): Boolean {
        val p = path.trimEnd('/').removePrefix("./")
        if (p.isEmpty()) return true
        val relative = File(File(doc).parent ?: ".", p).normalize().invariantSeparatorsPath
        return p in paths || relative in paths || paths.any { it.endsWith("/$p") }
    }
    for ((doc, text) in docs) {
        val (backticked, links) = referencesOf(doc, text)
        for (ref in backticked) {
            val t = ref.text
            if (pathReference.matches(t)) {
                // build output (benchmarks/target/report/...) exists only after a run
                if (t.split('/').contains("target")) continue
                if (!pathExists(doc, t)) stale += "$ref: no such file or directory in the repository"
                continue
            }
            val m = classReference.matchEntire(t) ?: continue
            val type = m.groupValues[1]
            if (type.none { it.isLowerCase() }) continue // ACTIVE, TERMINATED: states and constants, not classes
            declarations.check(type, m.groupValues[2].ifEmpty { null })?.let { stale += "$ref: $it" }
        }
        for (ref in links) if (!pathExists(doc, ref.text)) stale += "$ref: the link leads to no file or directory"
    }
    return stale
}

private fun sourcesOfRepository(paths: Set<String>): Map<String, String> =
    paths.filter { it.endsWith(".kt") || it.endsWith(".java") }.associateWith { File(repositoryRoot, it).readText() }

class DocReferencesSpec : FunSpec({
    test("every backticked Class, Class.member and path, and every link, of the README and docs/ names something the code has") {
        val paths = repositoryPaths()
        val docs = livingDocs().associateWith { File(repositoryRoot, it).readText() }
        docs.size shouldBeGreaterThan 5
        val stale = staleReferences(docs, sourcesOfRepository(paths), paths)
        withClue(
            "These references of the docs name a class, member or file that the code no longer has (renamed, " +
                "moved to another class or file, or removed). Find where the code has it now and name that, or " +
                "correct the sentence. A JDK or library name belongs to a package of foreignPackages in " +
                "DocReferencesSpec. doc:line: `reference`: why:\n" + stale.joinToString("\n")
        ) { stale.shouldBeEmpty() }
    }

    test("self-check of the reference scan on made-up docs and sources: it reports renamed members, classes and files") {
        val sources = mapOf(
            "a/src/Pool.kt" to """
                interface Ops { fun forkJoin() }
                class Pool(val size: Int) : Ops {
                    fun execute(task: Runnable) { val local = 1 }
                    companion object { const val LIMIT = 3; val shared = Pool(1) }
                    enum class Mode { OFF, ON }
                }
                fun <T> Pool.forkHalf(x: T) = Unit // a comment: fun notDeclared()
            """.trimIndent(),
            "a/src/StopSteals.kt" to "internal fun stopSteals() = Unit",
            "a/src/Helper.java" to "final class Helper { static int twice(int x) { return 2 * x; } }",
        )
        val docs = mapOf(
            "docs/x.md" to """
                `Pool.execute`, `Pool.size`, `Pool.LIMIT`, `Pool.Mode`, `Pool.forkHalf(1)`, `Helper.twice`, `Pool<T>`, `ACTIVE`
                `ForkJoinPool.commonPool()`, `Thread.yield()`, `Dispatchers.Default`, `LockSupport.park`, `List.map`, `Int.MAX_VALUE`
                `Pool.run`, `Worker.execute`, `Pool.notDeclared`, `ForkJoinPool.managedBlok`, `a/src/Gone.kt`, `Pool.kt`, `Pool.local`
                ```kotlin
                `Fenced.ignored`
                ```
                [ok](../a/src/Helper.java), [gone](y.md#top), [web](https://example.com), `executor.queued`, `a/src/`
                `Pool.forkJoin`, `Pool.getShared()`, `StopSteals`, `StopStealsKt`, `Pool.Mode.ON`, `Pool.getLocal()`
            """.trimIndent(),
        )
        val paths = setOf("a", "a/src", "a/src/Pool.kt", "a/src/StopSteals.kt", "a/src/Helper.java", "docs", "docs/x.md")
        staleReferences(docs, sources, paths).map { it.split(": ").take(2).joinToString(": ") } shouldContainExactlyInAnyOrder listOf(
            "docs/x.md:3: Pool.run", "docs/x.md:3: Worker.execute", "docs/x.md:3: Pool.notDeclared",
            "docs/x.md:3: ForkJoinPool.managedBlok", "docs/x.md:3: a/src/Gone.kt", "docs/x.md:3: Pool.local",
            "docs/x.md:7: y.md", "docs/x.md:8: Pool.getLocal()",
        )
    }
})
