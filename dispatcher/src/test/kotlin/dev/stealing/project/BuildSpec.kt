package dev.stealing.project

import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldBeEmpty
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.string.shouldStartWith
import java.io.File

// Checks of the build itself that the compilers cannot make. Every Kotlin and javac warning
// already fails the build (-Werror in the root pom.xml); these catch what kotlin-maven-plugin
// only warns about, and README statements that must follow the POMs. Paths are relative to the
// module directory (dispatcher/), where Maven runs the tests.

private val repo = File("..")

private fun pom(dir: String): String = File(repo, "$dir/pom.xml").readText()

private fun property(pomText: String, name: String): String =
    Regex("<$name>([^<]*)</$name>").find(pomText)?.groupValues?.get(1) ?: error("no <$name> property")

/** The main source directories kotlinc is given in module [module], relative to it. */
internal fun mainSourceDirs(rootPom: String, modulePom: String): Set<String> {
    fun dirs(text: String) = Regex("<sourceDir>\\$\\{project\\.basedir}/([^<]+)</sourceDir>").findAll(text)
        .map { it.groupValues[1] }.filter { it.startsWith("src/main/") }.toSet()
    val inherited = if (modulePom.contains("<sourceDirs combine.self=\"override\">")) emptySet() else dirs(rootPom)
    val sourceDirectory = Regex("<sourceDirectory>([^<]+)</sourceDirectory>").find(modulePom)?.groupValues?.get(1) ?: "src/main/java"
    return inherited + dirs(modulePom) + sourceDirectory
}

class BuildSpec : FunSpec({
    test("every main source directory given to kotlinc exists (kotlin-maven-plugin only warns \"Source root doesn't exist\")") {
        val rootPom = pom(".")
        val modules = Regex("<module>([^<]+)</module>").findAll(rootPom).map { it.groupValues[1] }.toList()
        val missing = modules.flatMap { module ->
            mainSourceDirs(rootPom, pom(module)).filterNot { File(repo, "$module/$it").isDirectory }.map { "$module/$it" }
        }
        withClue("Declared in the POMs (the root's kotlin-maven-plugin executions, a module's <sourceDirs> or <sourceDirectory>, default src/main/java), missing on disk") {
            missing.shouldBeEmpty()
        }
    }

    test("self-check: a module without src/main/java that does not override the inherited source dirs is reported") {
        val rootPom = "<sourceDir>\${project.basedir}/src/main/kotlin</sourceDir><sourceDir>\${project.basedir}/src/main/java</sourceDir>"
        mainSourceDirs(rootPom, "<build></build>") shouldBe setOf("src/main/kotlin", "src/main/java")
        mainSourceDirs(rootPom, "<sourceDirectory>src/main/kotlin</sourceDirectory><sourceDirs combine.self=\"override\">" +
            "<sourceDir>\${project.basedir}/src/main/kotlin</sourceDir></sourceDirs>") shouldBe setOf("src/main/kotlin")
    }

    test("the README's Quick start names the supported Kotlin and kotlin-stdlib floors of the POMs") {
        val rootPom = pom(".")
        val language = property(rootPom, "kotlin.consumer.version")
        val stdlib = property(rootPom, "kotlin.stdlib.floor")
        val floorApp = File(repo, "samples/apps/floor/pom.xml").readText()
        withClue("samples/apps/floor is built with the floor compiler and stdlib") {
            property(floorApp, "kotlin.version") shouldStartWith "$language."
            property(floorApp, "kotlin.stdlib.version") shouldBe stdlib
        }
        val readme = File(repo, "README.md").readText()
        readme shouldContain "Kotlin $language or newer"
        readme shouldContain "kotlin-stdlib $stdlib or newer"
    }
})
