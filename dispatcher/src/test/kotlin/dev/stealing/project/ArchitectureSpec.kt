package dev.stealing.project

import dev.stealing.PoolExecutorService
import com.tngtech.archunit.base.DescribedPredicate
import com.tngtech.archunit.core.domain.JavaAccess
import com.tngtech.archunit.core.domain.JavaClass
import com.tngtech.archunit.core.domain.JavaClasses
import com.tngtech.archunit.core.importer.ClassFileImporter
import com.tngtech.archunit.core.importer.ImportOption
import com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses
import com.tngtech.archunit.library.Architectures.layeredArchitecture
import com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices
import dev.stealing.internal.worker.Worker
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldBeEmpty
import kotlin.reflect.KVisibility

/**
 * Who may depend on whom. The public API is `dev.stealing`; the engine is one package per
 * subsystem under `dev.stealing.internal` (docs/design.md, "Packages"), in layers that use only
 * the layers below them. The leaves (queue, timer,
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

    test("the layers: API, loops, pool, join, worker, the leaves (queue, timer, idle), jvm; each uses only those below it") {
        // So the engine depends on no API class: its configuration, statistics and task are its
        // own types (PoolConfig, PoolSnapshot, JoinableTask), made from and into the public ones
        // at the API's edge. Inside a layer (the three leaves) only the cycle rule above applies.
        layeredArchitecture().consideringOnlyDependenciesInLayers()
            .layer("API").definedBy("dev.stealing")
            .layer("loops").definedBy("dev.stealing.internal.loops..")
            .layer("pool").definedBy("dev.stealing.internal.pool..")
            .layer("join").definedBy("dev.stealing.internal.join..")
            .layer("worker").definedBy("dev.stealing.internal.worker..")
            .layer("leaves").definedBy("dev.stealing.internal.queue..", "dev.stealing.internal.timer..", "dev.stealing.internal.idle..")
            .layer("jvm").definedBy("dev.stealing.internal.jvm..")
            .whereLayer("API").mayNotBeAccessedByAnyLayer()
            .whereLayer("loops").mayOnlyBeAccessedByLayers("API")
            .whereLayer("pool").mayOnlyBeAccessedByLayers("API", "loops")
            .whereLayer("join").mayOnlyBeAccessedByLayers("API", "loops", "pool")
            .whereLayer("worker").mayOnlyBeAccessedByLayers("API", "loops", "pool", "join")
            .whereLayer("leaves").mayOnlyBeAccessedByLayers("API", "loops", "pool", "join", "worker")
            .whereLayer("jvm").mayOnlyBeAccessedByLayers("API", "loops", "pool", "join", "worker", "leaves")
            .check(main)
    }

    test("no class outside the worker package touches a field of Worker") {
        val workerField = JavaAccess.Predicates.targetOwner(DescribedPredicate.describe<JavaClass>("Worker") {
            it.isEquivalentTo(Worker::class.java)
        })
        noClasses().that().resideOutsideOfPackage("dev.stealing.internal.worker..")
            .should().accessFieldWhere(workerField)
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
