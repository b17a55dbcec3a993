package dev.stealing.project

import dev.stealing.StealingDispatcher
import dev.stealing.StealingMetrics
import dev.stealing.StealingStats
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.collections.shouldNotBeEmpty
import io.kotest.matchers.shouldBe
import io.micrometer.core.instrument.simple.SimpleMeterRegistry
import java.io.File
import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit
import kotlin.reflect.KVisibility
import kotlin.reflect.full.memberProperties

// docs/observability.md is where the meters of StealingMetrics and the fields of a stats()
// snapshot are listed (the KDoc of StealingMetrics links there): these tests hold those lists to
// what the code registers and prints. Paths are relative to dispatcher/, where Maven runs the tests.

private val observability = File("../docs/observability.md")

/** The lines of observability.md from the heading [heading] up to the next "## " heading. */
private fun section(heading: String): List<String> {
    val lines = observability.readLines()
    val start = lines.indexOfFirst { it == heading }
    check(start >= 0) { "docs/observability.md has no \"$heading\" section" }
    val end = lines.drop(start + 1).indexOfFirst { it.startsWith("## ") }.let { if (it < 0) lines.size else start + 1 + it }
    return lines.subList(start + 1, end)
}

/** The `name=` labels of the first `StealingStats(...)` in [text], in order, without those of nested values. */
private fun labelsOf(text: String): List<String> {
    val start = text.indexOf("StealingStats(")
    check(start >= 0) { "no StealingStats(...) in the text" }
    var inner = text.substring(start + "StealingStats(".length)
    while (true) { // drop nested (...) and [...], innermost first, up to the closing parenthesis
        val shorter = inner.replace(Regex("""\([^()\[\]]*\)|\[[^()\[\]]*\]"""), "")
        if (shorter == inner) break
        inner = shorter
    }
    return Regex("""\b([A-Za-z]+)=""").findAll(inner.substringBefore(')')).map { it.groupValues[1] }.toList()
}

class ObservabilityDocSpec : FunSpec({
    test("the meter tables of docs/observability.md list exactly the meters StealingMetrics registers") {
        val documented = section("## Micrometer").mapNotNull { Regex("^\\| `([a-z.]+)` \\|").find(it)?.groupValues?.get(1) }
        documented.shouldNotBeEmpty()
        val pool = StealingDispatcher(1, "documented")
        val release = CountDownLatch(1)
        try {
            // A fair queue with a task waiting, so that its row of stealing.fair.queued exists.
            val started = CountDownLatch(1)
            pool.executor.execute { started.countDown(); release.await() }
            started.await(10, TimeUnit.SECONDS) shouldBe true
            pool.fairQueue("batch").executor.execute { }
            val registry = SimpleMeterRegistry()
            StealingMetrics(pool).bindTo(registry)
            val registered = registry.meters.map { it.id.name }.distinct()
            withClue(
                "docs/observability.md (## Micrometer) must have one table row per meter that StealingMetrics.bindTo " +
                    "registers, and no other: documented ${documented.sorted()}, registered ${registered.sorted()}"
            ) { documented.sorted() shouldContainExactly registered.sorted() }
        } finally {
            release.countDown()
            pool.close()
        }
    }

    test("the stats() sample of docs/observability.md names every StealingStats property, in toString's order") {
        val block = Regex("```\n(StealingStats\\(.*?)```", RegexOption.DOT_MATCHES_ALL).find(section("## `stats()`").joinToString("\n"))
        checkNotNull(block) { "docs/observability.md (## `stats()`) has no plain code block that starts with StealingStats(" }
        val sample = labelsOf(block.groupValues[1])
        val printed = StealingDispatcher(1, "printed").use { labelsOf(it.stats().toString()) }
        withClue("The sample must be what StealingStats.toString prints: same labels, same order") {
            sample shouldContainExactly printed
        }
        val properties = StealingStats::class.memberProperties.filter { it.visibility == KVisibility.PUBLIC }.map { it.name }
        withClue("StealingStats.toString and the sample must name every public property of StealingStats") {
            sample.sorted() shouldContainExactly properties.sorted()
        }
    }
})
