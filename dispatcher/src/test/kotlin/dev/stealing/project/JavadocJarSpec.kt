package dev.stealing.project

import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldBeEmpty
import io.kotest.matchers.collections.shouldContainAll
import io.kotest.matchers.shouldBe
import java.io.File
import java.util.zip.ZipFile

// The javadoc jar as a Java user reads it (in a Java IDE or on a javadoc site): Java types and
// signatures, every parameter documented, nothing of the implementation. The jar is built in the
// package phase, after the tests, so this spec runs in a Surefire execution of its own in the
// verify phase (`javadoc-jar` in dispatcher/pom.xml), which passes the jar's path as the system
// property `javadoc.jar`; without it (the ordinary test run) it is skipped.

private val javadocJar: File? = System.getProperty("javadoc.jar")?.takeIf { it.isNotBlank() }?.let(::File)

private class Page(val name: String, val html: String) {
    /** The class declaration and every member signature, in the summaries and the details. */
    val signatures: List<String> by lazy {
        val blocks = Regex("""<div class="(?:type-signature|member-signature)">(.*?)</div>""", RegexOption.DOT_MATCHES_ALL)
            .findAll(html).map { it.groupValues[1] }
        val summaryCells = Regex("""<div class="col-(?:first|second|constructor-name)[^"]*">(.*?)</div>""", RegexOption.DOT_MATCHES_ALL)
            .findAll(html).map { it.groupValues[1] }
        (blocks + summaryCells).map(::text).toList()
    }

    /** The member details: (id, HTML of the section). */
    val details: List<Pair<String, String>> by lazy {
        Regex("""<section class="detail" id="([^"]*)">(.*?)</section>""", RegexOption.DOT_MATCHES_ALL)
            .findAll(html).map { it.groupValues[1] to it.groupValues[2] }.toList()
    }

    /** The text of every `<code>` element and every link's target. */
    val codeAndLinks: List<String> by lazy {
        (Regex("""<code>(.*?)</code>""", RegexOption.DOT_MATCHES_ALL).findAll(html).map { text(it.groupValues[1]) } +
            Regex("""href="([^"]*)"""").findAll(html).map { it.groupValues[1] }).toList()
    }
}

private fun text(html: String): String =
    html.replace(Regex("<[^>]+>"), "").replace("&lt;", "<").replace("&gt;", ">").replace("&nbsp;", " ")
        .replace("&#8203;", "").replace("&amp;", "&").replace(Regex("\\s+"), " ").trim()

private fun pages(): List<Page> = ZipFile(javadocJar!!).use { zip ->
    zip.entries().asSequence().filter { it.name.endsWith(".html") }
        .map { Page(it.name, zip.getInputStream(it).readBytes().decodeToString()) }.toList()
}

/** The class pages of the API package (not its package pages nor the class-use pages). */
private fun classPages(all: List<Page>): List<Page> =
    all.filter { it.name.startsWith("dev/stealing/") && it.name.count { c -> c == '/' } == 2 && !it.name.contains("/package-") }

/** Parameter names of a member detail's signature: the last word of each top-level parameter. */
private fun parameterNames(detail: String): List<String> {
    val params = Regex("""<span class="parameters">\((.*?)\)</span>""", RegexOption.DOT_MATCHES_ALL).find(detail)
        ?.groupValues?.get(1)?.let(::text) ?: return emptyList()
    val names = mutableListOf<String>()
    var depth = 0
    val current = StringBuilder()
    for (c in "$params,") {
        when {
            c == '<' -> { depth++; current.append(c) }
            c == '>' -> { depth--; current.append(c) }
            c == ',' && depth == 0 -> {
                current.toString().trim().split(' ').lastOrNull()?.takeIf { it.isNotEmpty() }?.let(names::add)
                current.clear()
            }
            else -> current.append(c)
        }
    }
    return names
}

/**
 * Simple names of the classes that are not API: those of the internal packages and the
 * dev.stealing classes absent from the API listing (compiled classes, so none is forgotten).
 */
private fun implementationClassNames(): Set<String> {
    val classes = File("target/classes/dev/stealing")
    val listed = File("api/stealing-dispatcher.api").readLines().filter { !it.startsWith(" ") }
        .mapNotNull { Regex("""\b(?:class|interface|enum) dev\.stealing\.([\w$]+)""").find(it)?.groupValues?.get(1) }.toSet()
    val internal = File(classes, "internal").walkTopDown().filter { it.name.endsWith(".class") }
        .map { it.name.removeSuffix(".class").substringBefore('$') }
    val unlisted = classes.listFiles { f -> f.name.endsWith(".class") }.orEmpty()
        .map { it.name.removeSuffix(".class") }.filter { it !in listed && !it.contains('$') && it != "module-info" }
    return (internal + unlisted).filter { it.length > 1 && it.first().isUpperCase() }.toSet()
}

/**
 * Kotlin that has leaked into a Java page ([html] of page [name]): Kotlin call syntax in inline code
 * (a labelled Kotlin sample and a paragraph that starts "In Kotlin" are meant for Kotlin readers),
 * the `DefaultImpls` classes that Kotlin compiles into interfaces, the internal kotlinx `Delay` as
 * an implemented interface, a throws clause about a parameter the member does not take, a summary
 * cut at "e.g.", a method linked as `name()` where it has no overload without parameters.
 */
internal fun kotlinLeaks(name: String, html: String): List<String> {
    val problems = ArrayList<String>()
    val forJava = html.replace(Regex("<p><em>Kotlin:</em>\\s*<pre>.*?</pre>", RegexOption.DOT_MATCHES_ALL), "")
        .split("<p>").filterNot { it.startsWith("In Kotlin") }.joinToString("<p>")
    for (code in Regex("""<code>(.*?)</code>""", RegexOption.DOT_MATCHES_ALL).findAll(forJava).map { text(it.groupValues[1]) }) {
        if (Regex("""\w<[\w.?<>, ]+>\s*\{|\{\s*\d+\s*}""").containsMatchIn(code)) problems += "$name: Kotlin call syntax '$code'"
    }
    // Including the stdlib's (ContinuationInterceptor's, CoroutineContext.Element's), which the
    // doclet lists as nested classes inherited through kotlinx's CoroutineDispatcher unless it
    // reads those interfaces from src/javadoc/stdlib.
    Regex("""[\w.]*DefaultImpls""").findAll(html).map { it.value }.distinct()
        .forEach { problems += "$name: $it (a Kotlin interface's compiled bodies)" }
    Regex("""<div class="type-signature">(.*?)</div>""", RegexOption.DOT_MATCHES_ALL).findAll(html).map { text(it.groupValues[1]) }
        .filter { Regex("""\bDelay\b""").containsMatchIn(it) }.forEach { problems += "$name: implements kotlinx's internal Delay '$it'" }
    for ((id, detail) in Regex("""<section class="detail" id="([^"]*)">(.*?)</section>""", RegexOption.DOT_MATCHES_ALL)
        .findAll(html).map { it.groupValues[1] to it.groupValues[2] }) {
        val params = parameterNames(detail).toSet()
        // A throws clause that names parameters in code, none of them this member's (a name the
        // class documents as a property may also appear: only the member's own parameter list counts).
        val throwsClauses = Regex("""<dt>Throws:</dt>(.*?)</dl>""", RegexOption.DOT_MATCHES_ALL).find(detail)?.groupValues?.get(1)
            ?.split("<dd>")?.drop(1).orEmpty()
        for (clause in throwsClauses) {
            val named = Regex("""<code>(\w+)</code>""").findAll(clause).map { it.groupValues[1] }.filter { it in setOf("parallelism", "name", "weight", "options") }.toSet()
            if (params.isEmpty() && named.isNotEmpty() && id.endsWith("()")) problems += "$name#$id: throws for $named, which it does not take"
        }
        // A link labelled `m()` to an overload that takes parameters.
        Regex("""<a href="[^"]*#(\w+)\(([^)"]+)\)"[^>]*><code>(\w+)\(\)</code></a>""").findAll(detail)
            .forEach { problems += "$name#$id: '${it.groupValues[3]}()' links to ${it.groupValues[1]}(${it.groupValues[2]})" }
    }
    Regex("""<div class="block">(.*?)</div>""", RegexOption.DOT_MATCHES_ALL).findAll(html).map { text(it.groupValues[1]) }
        .filter { it.endsWith("e.g.") || it.endsWith("i.e.") }.forEach { problems += "$name: summary cut at '${it.takeLast(40)}'" }
    return problems
}

class JavadocJarSpec : FunSpec({
    val enabled = javadocJar != null

    test("self-check: each kind of Kotlin leak is found") {
        val leaks = kotlinLeaks(
            "X.html",
            """<div class="type-signature">public class X extends Object implements kotlinx.coroutines.Delay</div>
            |<h2>Nested classes inherited from interface Delay</h2><code>kotlinx.coroutines.Delay.DefaultImpls</code>
            |<h2>Nested classes inherited from interface ContinuationInterceptor</h2><code>kotlin.coroutines.ContinuationInterceptor.DefaultImpls</code>
            |<div class="block">A sample: <code>executor.submit&lt;Int&gt; { 42 }.join()</code>.</div>
            |<div class="block">A short summary, e.g.</div>
            |<section class="detail" id="&lt;init&gt;()"><div class="member-signature"><span class="parameters">()</span></div>
            |<dl class="notes"><dt>Throws:</dt><dd><code>IllegalArgumentException</code> - if <code>parallelism</code> is out of range</dd></dl></section>
            |<section class="detail" id="sort(int[])"><div class="block">Waits as
            |<a href="#parallelFor(int,int,java.util.function.IntConsumer)"><code>parallelFor()</code></a> does.</div></section>
            |""".trimMargin().replace("id=\"&lt;init&gt;()\"", "id=\"X()\""),
        )
        leaks.map { it.substringAfter(": ").substringBefore(" '").substringBefore(" (").substringBefore(" for ") } shouldContainAll listOf(
            "Kotlin call syntax", "kotlinx.coroutines.Delay.DefaultImpls", "kotlin.coroutines.ContinuationInterceptor.DefaultImpls", "implements kotlinx's internal Delay", "summary cut at", "throws",
        )
        leaks.any { "links to parallelFor(int,int" in it } shouldBe true
    }

    test("no Kotlin leaks into a Java page").config(enabled = enabled) {
        classPages(pages()).flatMap { kotlinLeaks(it.name, it.html) }.shouldBeEmpty()
    }

    test("the package page names every Kotlin-only function of the API listing it leaves out").config(enabled = enabled) {
        // The top-level suspend functions (static, with a Continuation), and parallelFold, which
        // is inline with a reified type: it has no method Java could call, nor a line in the listing.
        val functions = File("api/stealing-dispatcher.api").readLines()
            .filter { it.startsWith("  public static final") && "kotlin.coroutines.Continuation" in it }
            .mapNotNull { Regex("""(\w+)\(""").find(it)?.groupValues?.get(1) }.toSet() + "parallelFold"
        functions shouldContainAll listOf("forkJoin", "awaitInline", "parallelMap", "parallelForEach")
        val packagePage = pages().first { it.name == "dev/stealing/package-summary.html" }.html
        functions.filter { "<code>$it</code>" !in packagePage }.shouldBeEmpty()
    }

    test("the API's classes have pages, the Kotlin-only and internal classes none").config(enabled = enabled) {
        val names = classPages(pages()).map { it.name.removePrefix("dev/stealing/").removeSuffix(".html") }
        names shouldContainAll listOf(
            "StealingDispatcher", "StealingOptions", "StealingExecutorService", "ForkedTask", "StealingStats",
            "StealingStats.Pinning", "StealingStats.State", "FairQueueDispatcher", "FairQueueStats",
            "StealingMetrics", "TaskExceptionHandler",
        )
        val kotlinOnly = names.filter { it.endsWith("Kt") || it.endsWith(".Companion") || it.endsWith(".Default") }
        withClue("file facades of suspend functions and companion objects") { kotlinOnly.shouldBeEmpty() }
        withClue("implementation classes") { names.filter { it in implementationClassNames() }.shouldBeEmpty() }
    }

    test("no page says TODO, names an internal package or leaves KDoc syntax unconverted").config(enabled = enabled) {
        val problems = pages().flatMap { page ->
            // Code (samples in <pre>, code in running text) may hold brackets of its own; a link
            // that JavadocStubs could not resolve is code too, so one left in the text is KDoc.
            val text = text(page.html.replace(Regex("<pre>.*?</pre>|<code>.*?</code>", RegexOption.DOT_MATCHES_ALL), ""))
            listOfNotNull(
                "TODO".takeIf { page.html.contains("TODO") },
                "dev.stealing.internal".takeIf { page.html.contains("dev.stealing.internal") || page.html.contains("dev/stealing/internal") },
                "a backtick".takeIf { text.contains('`') },
                "a KDoc link".takeIf { Regex("""\[[A-Za-z][\w.]*]""").containsMatchIn(text) },
                "a KDoc tag".takeIf { Regex("""@(?:property|param|sample|receiver)\b""").containsMatchIn(text) },
            ).map { "${page.name}: $it" }
        }
        problems.shouldBeEmpty()
    }

    test("no implementation class is named in code, links or signatures").config(enabled = enabled) {
        val hidden = implementationClassNames()
        val found = classPages(pages()).flatMap { page ->
            (page.codeAndLinks + page.signatures).flatMap { s ->
                Regex("""\b[A-Z]\w*\b""").findAll(s).map { it.value }.filter { it in hidden }.map { "${page.name}: $it in '$s'" }
            }
        }.distinct()
        found.shouldBeEmpty()
    }

    test("signatures are Java's: no Kotlin-only types, no private or mangled members").config(enabled = enabled) {
        val kotlinTypes = Regex("""\b(?:Unit|Any|Int|Nothing)\b|kotlin\.Unit|kotlin\.jvm\.functions|\bFunction[0-9]+\b|\bContinuation\b""")
        val problems = classPages(pages()).flatMap { page ->
            val layout = listOfNotNull("${page.name}: no signatures found (not the standard doclet's layout)".takeIf {
                page.signatures.isEmpty() || !page.html.contains("class=\"type-signature\"")
            })
            layout + page.signatures.mapNotNull { s ->
                when {
                    kotlinTypes.containsMatchIn(s) -> "${page.name}: Kotlin type in '$s'"
                    Regex("""\bprivate\b""").containsMatchIn(s) -> "${page.name}: private member '$s'"
                    Regex("""\w\$\w|\w-\w+\(""").containsMatchIn(s) -> "${page.name}: mangled name in '$s'"
                    else -> null
                }
            }
        }.distinct()
        problems.shouldBeEmpty()
    }

    test("every parameter of every constructor and method is documented").config(enabled = enabled) {
        val undocumented = classPages(pages()).flatMap { page ->
            page.details.flatMap { (id, detail) ->
                parameterNames(detail).filter { name -> !Regex("""<code>${Regex.escape(name)}</code> -""").containsMatchIn(detail) }
                    .map { "${page.name.removePrefix("dev/stealing/").removeSuffix(".html")}.$id: $it" }
            }
        }
        undocumented.shouldBeEmpty()
    }

    test("the spec sees the jar").config(enabled = enabled) {
        classPages(pages()).isNotEmpty() shouldBe true
    }
})
