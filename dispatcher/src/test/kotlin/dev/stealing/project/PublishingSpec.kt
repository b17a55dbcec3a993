package dev.stealing.project

import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldBeEmpty
import io.kotest.matchers.collections.shouldContainAll
import org.w3c.dom.Element
import java.io.File
import javax.xml.parsers.DocumentBuilderFactory

// What Maven Central asks of a published artifact, checked on the POMs: the library's POM with
// what it inherits from the parent (both are published) has a name, description, url, licenses,
// developers and scm; the library attaches a sources and a javadoc jar; a `release` profile, and
// only it, signs with gpg; no dependency or plugin is a SNAPSHOT. (JavadocJarSpec checks the
// jars themselves after `package`.) Paths are relative to dispatcher/, where the tests run.

private fun parse(text: String): Element = DocumentBuilderFactory.newInstance().newDocumentBuilder()
    .parse(text.byteInputStream()).documentElement

private fun Element.children(name: String): List<Element> =
    (0 until childNodes.length).map { childNodes.item(it) }.filterIsInstance<Element>().filter { it.tagName == name }

private fun Element.child(path: String): Element? =
    path.split('/').fold(this as Element?) { e, name -> e?.children(name)?.firstOrNull() }

private fun Element.text(path: String): String = child(path)?.textContent?.trim().orEmpty()

/** The plugins of [build] (a `<build>` element), by artifactId, with the goals of their executions. */
private fun goals(build: Element?): Map<String, Set<String>> =
    build?.child("plugins")?.children("plugin").orEmpty().associate { plugin ->
        plugin.text("artifactId") to plugin.child("executions")?.children("execution").orEmpty()
            .flatMap { it.child("goals")?.children("goal").orEmpty().map { g -> g.textContent.trim() } }.toSet()
    }

/** What Central would refuse in the parent POM [rootPom] and the library's POM [libraryPom]; empty if nothing. */
internal fun centralProblems(rootPom: String, libraryPom: String): List<String> {
    val root = parse(rootPom)
    val library = parse(libraryPom)
    val problems = ArrayList<String>()
    // The library's POM inherits from the parent what it does not state itself.
    fun effective(path: String) = library.text(path).ifEmpty { root.text(path) }
    for (pom in listOf("parent" to root, "library" to library)) {
        for (path in listOf("name", "description")) if (pom.second.text(path).isEmpty()) problems += "${pom.first} POM: no <$path>"
    }
    for (path in listOf("url", "licenses/license/name", "licenses/license/url", "developers/developer/name",
        "scm/connection", "scm/developerConnection", "scm/url")) {
        if (effective(path).isEmpty()) problems += "no <${path.replace("/", "><")}> (library, with what it inherits)"
    }
    val libraryGoals = goals(library.child("build"))
    if ("jar-no-fork" !in libraryGoals["maven-source-plugin"].orEmpty() && "jar" !in libraryGoals["maven-source-plugin"].orEmpty()) {
        problems += "the library attaches no sources jar (maven-source-plugin jar-no-fork)"
    }
    if ("jar" !in libraryGoals["maven-javadoc-plugin"].orEmpty()) problems += "the library attaches no javadoc jar (maven-javadoc-plugin jar)"
    val release = root.child("profiles")?.children("profile").orEmpty().firstOrNull { it.text("id") == "release" }
    if (release == null) {
        problems += "no `release` profile"
    } else {
        if (release.child("activation") != null) problems += "the `release` profile must be asked for (-Prelease), not activated by itself"
        if ("sign" !in goals(release.child("build"))["maven-gpg-plugin"].orEmpty()) problems += "the `release` profile does not sign (maven-gpg-plugin sign)"
    }
    for (pom in listOf("parent" to root, "library" to library)) {
        val signsByDefault = listOfNotNull(pom.second.child("build"), pom.second.child("build/pluginManagement"))
            .any { "maven-gpg-plugin" in goals(it) && goals(it).getValue("maven-gpg-plugin").isNotEmpty() }
        if (signsByDefault) problems += "${pom.first} POM: maven-gpg-plugin runs outside the release profile (the default build would need a key)"
    }
    // Versions: a SNAPSHOT anywhere but this project's own version (which a release sets).
    val own = root.text("version")
    for (pom in listOf("parent" to root, "library" to library)) {
        val versions = pom.second.getElementsByTagName("*").let { all -> (0 until all.length).map { all.item(it) as Element } }
            .filter { it.tagName == "version" || it.tagName.endsWith(".version") }
            .map { it.textContent.trim() }
            .filter { it.endsWith("-SNAPSHOT") && it != own }
        for (v in versions) problems += "${pom.first} POM: SNAPSHOT dependency or plugin version $v"
    }
    return problems
}

class PublishingSpec : FunSpec({
    test("the published POMs meet Maven Central's requirements (metadata, sources and javadoc jars, signing in -Prelease only, no SNAPSHOTs)") {
        val problems = centralProblems(File("../pom.xml").readText(), File("pom.xml").readText())
        withClue("pom.xml (the parent) and dispatcher/pom.xml") { problems.shouldBeEmpty() }
    }

    test("the Pekko module's POM meets them too: it is published as an artifact of its own") {
        val problems = centralProblems(File("../pom.xml").readText(), File("../pekko/pom.xml").readText())
        withClue("pom.xml (the parent) and pekko/pom.xml") { problems.shouldBeEmpty() }
    }

    test("self-check: each missing piece is reported") {
        val root = File("../pom.xml").readText()
        val library = File("pom.xml").readText()
        val broken = centralProblems(
            root.replace(Regex("<licenses>.*?</licenses>", RegexOption.DOT_MATCHES_ALL), "")
                .replace("<artifactId>maven-gpg-plugin</artifactId>", "<artifactId>no-gpg</artifactId>")
                .replace("<kotest.version>6.2.4</kotest.version>", "<kotest.version>6.3.0-SNAPSHOT</kotest.version>"),
            library.replace("<goal>jar-no-fork</goal>", "<goal>none</goal>"),
        )
        broken shouldContainAll listOf(
            "no <licenses><license><name> (library, with what it inherits)",
            "the library attaches no sources jar (maven-source-plugin jar-no-fork)",
            "the `release` profile does not sign (maven-gpg-plugin sign)",
            "parent POM: SNAPSHOT dependency or plugin version 6.3.0-SNAPSHOT",
        )
    }
})
