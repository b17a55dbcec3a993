package dev.stealing.project

import dev.stealing.StealingDispatcher
import io.kotest.assertions.fail
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import java.io.File
import java.lang.module.ModuleDescriptor
import java.lang.reflect.Modifier
import java.util.Locale
import java.util.concurrent.TimeUnit
import java.util.spi.ToolProvider
import javax.tools.Diagnostic
import javax.tools.DiagnosticCollector
import javax.tools.JavaFileObject
import javax.tools.ToolProvider as JavaTools

// The library as a JPMS module (src/main/java/module-info.java), seen from outside: a modular
// Java application (src/test/modular) is compiled against the compiled classes, which with
// their module-info.class form the module dev.stealing, and run in a JVM of its own on the
// module path; a second one, written here, must not compile because it imports an engine class.
// The tests themselves run on the class path (Surefire's useModulePath is off).

/** Where a class was loaded from: the library's target/classes, or a dependency's jar. */
private fun locationOf(c: Class<*>): File = File(c.protectionDomain.codeSource.location.toURI())

private val libraryClasses: File = locationOf(StealingDispatcher::class.java)

/** The library and the two modules it requires transitively, none of its optional ones. */
private val modulePath: List<File> = listOf(
    libraryClasses,
    locationOf(Unit::class.java),
    locationOf(kotlinx.coroutines.CoroutineScope::class.java),
)

private val work = File("target/modular")

private class Compilation(val success: Boolean, val errors: List<Diagnostic<out JavaFileObject>>) {
    fun describe(): String = errors.joinToString("\n") { "${it.code}: ${it.getMessage(Locale.ROOT)}" }
}

/** Compiles the Java [sources] (module-info.java among them) into [output] with javac. */
private fun compile(sources: List<File>, output: File): Compilation {
    val javac = JavaTools.getSystemJavaCompiler() ?: fail("no Java compiler in ${System.getProperty("java.home")}")
    val diagnostics = DiagnosticCollector<JavaFileObject>()
    // An empty class path: javac run in this JVM would otherwise take this JVM's (the library's
    // classes among them, in the unnamed module).
    val noClassPath = File(work, "empty").apply { mkdirs() }
    javac.getStandardFileManager(diagnostics, Locale.ROOT, Charsets.UTF_8).use { files ->
        val options = listOf(
            "--release", "17", "--module-path", modulePath.joinToString(File.pathSeparator),
            "--class-path", noClassPath.path, "-d", output.path,
        )
        val success = javac.getTask(null, files, diagnostics, options, null, files.getJavaFileObjectsFromFiles(sources)).call()
        return Compilation(success, diagnostics.diagnostics.filter { it.kind == Diagnostic.Kind.ERROR })
    }
}

/** The library's classes in packages under dev.stealing.internal that Java code could name. */
private fun internalClasses(): List<String> {
    val root = File(libraryClasses, "dev/stealing/internal")
    val loader = StealingDispatcher::class.java.classLoader
    return root.walkTopDown().filter { it.isFile && it.name.endsWith(".class") && '$' !in it.name && it.name != "package-info.class" }
        .map { it.relativeTo(libraryClasses).invariantSeparatorsPath.removeSuffix(".class").replace('/', '.') }
        .filter { Modifier.isPublic(Class.forName(it, false, loader).modifiers) }
        .sorted().toList()
}

class ModularConsumerSpec : FunSpec({
    test("the library's module descriptor exports dev.stealing only") {
        val descriptorFile = File(libraryClasses, "module-info.class")
        withClue("$descriptorFile is missing: javac compiles it from src/main/java/module-info.java") {
            descriptorFile.isFile shouldBe true
        }
        val descriptor = descriptorFile.inputStream().use { ModuleDescriptor.read(it) }
        descriptor.name() shouldBe "dev.stealing"
        descriptor.exports().map { "${it.source()} ${it.targets()}" } shouldBe listOf("dev.stealing []")
        descriptor.opens() shouldBe emptySet()
    }

    test("the descriptor requires exactly the modules the library's classes use (jdeps)") {
        // The optional dependencies must be on the module path for jdeps to name their modules.
        val optional = listOf(
            io.micrometer.context.ContextSnapshotFactory::class.java,
            io.micrometer.core.instrument.MeterRegistry::class.java,
            net.openhft.affinity.Affinity::class.java,
        ).map { locationOf(it) }
        val jdeps = ToolProvider.findFirst("jdeps").orElseThrow()
        val out = java.io.StringWriter()
        val code = java.io.PrintWriter(out).use { w ->
            jdeps.run(w, w, "--multi-release", "17", "--module-path", (modulePath + optional).joinToString(File.pathSeparator), "--check", "dev.stealing")
        }
        withClue(out) { code shouldBe 0 }
        // jdeps prints the descriptor it would write under this heading, one `requires` a line.
        val used = out.toString().lines().dropWhile { "[Suggested module descriptor for dev.stealing]" !in it }.drop(1)
            .takeWhile { it.trim().startsWith("requires ") }
            .map { it.trim().removeSuffix(";").split(' ').last() }
            .filter { it != "java.base" }.toSet()
        withClue(out) { used.isEmpty() shouldBe false }
        val declared = File(libraryClasses, "module-info.class").inputStream().use { ModuleDescriptor.read(it) }
            .requires().map { it.name() }.filter { it != "java.base" }.toSet()
        withClue("src/main/java/module-info.java requires $declared; the classes use $used\n$out") { declared shouldBe used }
    }

    test("a modular Java application compiles and runs against the library on the module path") {
        val sources = File("src/test/modular/com.example.consumer").walkTopDown().filter { it.name.endsWith(".java") }.toList()
        val classes = File(work, "consumer").apply { deleteRecursively() }
        val compilation = compile(sources, classes)
        withClue(compilation.describe()) { compilation.success shouldBe true }

        val java = File(System.getProperty("java.home"), "bin/java").path
        val process = ProcessBuilder(
            java,
            "--module-path", (modulePath + classes).joinToString(File.pathSeparator),
            // Not required by any module: where a build tool puts it.
            "--class-path", locationOf(io.micrometer.context.ContextSnapshotFactory::class.java).path,
            "--module", "com.example.consumer/com.example.consumer.ModularConsumer",
        ).redirectErrorStream(true).start()
        val output = process.inputStream.bufferedReader().readText()
        withClue("the consumer did not exit within 60 s:\n$output") { process.waitFor(60, TimeUnit.SECONDS) shouldBe true }
        withClue(output) { process.exitValue() shouldBe 0 }
        output.lines().filter { it.isNotBlank() } shouldBe listOf(
            "module dev.stealing@${descriptorVersion()} exports [dev.stealing]",
            "context-propagation on the class path: propagateContext works",
            "affinity absent: pinThreads refused",
            "fork/join sum 5000050000",
            "executor: submit on modular-worker-N, invokeAll 6",
            "jfr: 1 TaskFailure event",
        )
    }

    test("a modular Java application cannot import a class of an internal package") {
        val internal = internalClasses()
        if (internal.isEmpty()) {
            fail(
                "no public class under dev/stealing/internal in $libraryClasses: the engine's classes are expected in " +
                    "packages dev.stealing.internal.*, and this test imports one of them",
            )
        }
        val target = internal.firstOrNull { it == "dev.stealing.internal.pool.WorkStealingPool" } ?: internal.first()
        val pkg = target.substringBeforeLast('.')
        val src = File(work, "intruder-src").apply { deleteRecursively() }
        val moduleInfo = File(src, "module-info.java").apply {
            parentFile.mkdirs()
            writeText("module com.example.intruder {\n    requires dev.stealing;\n}\n")
        }
        val intruder = File(src, "com/example/intruder/Intruder.java").apply {
            parentFile.mkdirs()
            writeText("package com.example.intruder;\n\nimport $target;\n\nclass Intruder {\n}\n")
        }
        val compilation = compile(listOf(moduleInfo, intruder), File(work, "intruder").apply { deleteRecursively() })
        withClue(compilation.describe()) {
            compilation.success shouldBe false
            // The module-visibility error, not "package ... does not exist": the class is there.
            compilation.errors.map { it.code }.toSet() shouldBe setOf("compiler.err.package.not.visible")
            compilation.errors.first().getMessage(Locale.ROOT).lines() shouldBe listOf(
                "package $pkg is not visible",
                "  (package $pkg is declared in module dev.stealing, which does not export it)",
            )
        }
    }
})

/** The library's version as its descriptor records it (the project version). */
private fun descriptorVersion(): String =
    File(libraryClasses, "module-info.class").inputStream().use { ModuleDescriptor.read(it) }.rawVersion().orElse("")
