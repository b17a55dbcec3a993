package dev.stealing

import com.tngtech.archunit.base.DescribedPredicate
import com.tngtech.archunit.core.domain.JavaAccess
import com.tngtech.archunit.core.domain.JavaClass
import com.tngtech.archunit.core.domain.JavaClasses
import com.tngtech.archunit.core.importer.ClassFileImporter
import com.tngtech.archunit.core.importer.ImportOption
import com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses
import com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices
import dev.stealing.internal.worker.Worker
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldBeEmpty
import kotlin.reflect.KVisibility

/**
 * Who may depend on whom. The public API is `dev.stealing`; the engine is one package per
 * subsystem under `dev.stealing.internal` (docs/design.md, "Packages"). The leaves (queue, timer,
 * idle, jvm) know nothing of the worker or the pool above them: each sees what it needs through
 * an interface of its own package (`IdleHost`, `TimerHost`, `FairMember`), and the worker sees
 * the pool through `WorkerHost`. A rule changes only with its reason in the commit message.
 */
class ArchitectureSpec : FunSpec({
    val main: JavaClasses = ClassFileImporter()
        .withImportOption(ImportOption.DoNotIncludeTests())
        .importPackages("dev.stealing")

    test("the internal packages form no cycle") {
        slices().matching("dev.stealing.internal.(*)..").should().beFreeOfCycles().check(main)
    }

    test("queue, timer and idle depend on neither the worker nor the pool") {
        noClasses().that().resideInAnyPackage(
            "dev.stealing.internal.queue..",
            "dev.stealing.internal.timer..",
            "dev.stealing.internal.idle..",
            "dev.stealing.internal.jvm..",
        ).should().dependOnClassesThat().resideInAnyPackage(
            "dev.stealing.internal.worker..",
            "dev.stealing.internal.pool..",
            "dev.stealing.internal.join..",
        ).check(main)
    }

    test("no class outside the worker package touches a field of Worker") {
        val workerField = JavaAccess.Predicates.targetOwner(DescribedPredicate.describe<JavaClass>("Worker") {
            it.isEquivalentTo(Worker::class.java)
        })
        noClasses().that().resideOutsideOfPackage("dev.stealing.internal.worker..")
            .should().accessFieldWhere(workerField)
            .check(main)
    }

    test("the engine depends on no API class but ForkedTask") {
        // Its configuration and statistics are its own types (PoolConfig, PoolSnapshot), made from
        // and into the public ones at the API's edge. ForkedTask is still seen: the task type the
        // worker records a thief on, the loops fork and the pool hands back cancelled (a public
        // final class, so that a fork is one object, not a wrapper).
        val allowed = setOf(ForkedTask::class.java.name)
        val apiButNotAllowed = DescribedPredicate.describe<JavaClass>("an API class other than ${allowed.sorted()}") {
            it.packageName == "dev.stealing" && it.name.substringBefore('$') !in allowed // nested classes go with their class
        }
        noClasses().that().resideInAPackage("dev.stealing.internal..")
            .should().dependOnClassesThat(apiButNotAllowed)
            .check(main)
    }

    test("the API package holds only public declarations (no engine class)") {
        // A Kotlin `internal` class compiles to a public class, which a Java user would be offered.
        // The one exception: the implementation of the sealed StealingExecutorService, which
        // Kotlin allows only in the interface's own package.
        val exceptions = setOf(PoolExecutorService::class.java.name)
        val notPublic = main.filter { it.packageName == "dev.stealing" && it.isTopLevelClass && it.name !in exceptions }
            .mapNotNull { c ->
                val k = runCatching { Class.forName(c.name).kotlin }.getOrNull() ?: return@mapNotNull null
                val visibility = runCatching { k.visibility }.getOrNull()
                // File facades (FooKt) are not Kotlin classes; their internal functions are checked by ApiSpec.
                // A private top-level class compiles to a package-private one, which no user sees.
                if (visibility == null || visibility == KVisibility.PUBLIC || visibility == KVisibility.PRIVATE) null else "${c.name}: $visibility"
            }
        withClue("Engine classes belong in dev.stealing.internal.<subsystem>") { notPublic.shouldBeEmpty() }
    }
})
