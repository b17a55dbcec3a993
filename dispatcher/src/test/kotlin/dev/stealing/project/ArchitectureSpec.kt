package dev.stealing.project

import com.tngtech.archunit.base.DescribedPredicate
import com.tngtech.archunit.core.domain.JavaAccess
import com.tngtech.archunit.core.domain.JavaClass
import com.tngtech.archunit.core.domain.JavaClasses
import com.tngtech.archunit.core.domain.JavaModifier
import com.tngtech.archunit.lang.ArchCondition
import com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes
import com.tngtech.archunit.core.importer.ClassFileImporter
import com.tngtech.archunit.core.importer.ImportOption
import com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses
import com.tngtech.archunit.library.Architectures.layeredArchitecture
import com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices
import dev.stealing.internal.worker.Worker
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
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

    test("the API package holds only public classes, but for the private ones this rule lists") {
        // A Kotlin `internal` class compiles to a public class (Kotlin's visibility is in its
        // metadata only), which a Java user would be offered; a private top-level class compiles
        // to a package-private one, which no user sees. Engine classes belong in
        // dev.stealing.internal.<subsystem>; the API may keep a private class only where Kotlin
        // needs it in this package, each listed here with the reason.
        val allowed = mapOf(
            "dev.stealing.PoolExecutorFace" to "the one implementation of the sealed StealingExecutorService, which Kotlin keeps in its package",
            "dev.stealing.PoolParallelOperations" to "the one implementation of the sealed ParallelOperations, which StealingDispatcher delegates to",
            "dev.stealing.PoolFairQueueDispatcher" to "the one implementation of the sealed FairQueueDispatcher, sealed so that Java cannot call its constructor of engine types",
            "dev.stealing.PoolStealingStats" to "the one implementation of the sealed StealingStats, sealed so that Java cannot call its constructor of an engine type",
            "dev.stealing.PoolForkedTask" to "the one implementation of the sealed ForkedTask, sealed so that Java cannot construct a task the pool did not make",
            "dev.stealing.SnapshotFairQueueStats" to "the one implementation of the sealed FairQueueStats, sealed so that Java cannot construct figures the pool did not take",
            "dev.stealing.SnapshotPinning" to "the one implementation of the sealed StealingStats.Pinning, for the same reason as SnapshotFairQueueStats",
        )
        val kotlinClass = DescribedPredicate.describe<JavaClass>("a Kotlin class (not a file facade)") {
            it.reflect().getAnnotation(Metadata::class.java)?.kind == 1
        }
        val notListed = DescribedPredicate.describe<JavaClass>("not listed as allowed") { it.name !in allowed }
        val publicInKotlin = ArchCondition.from<JavaClass>(
            DescribedPredicate.describe("be public (in Kotlin, not only in bytecode)") {
                it.modifiers.contains(JavaModifier.PUBLIC) && it.reflect().kotlin.visibility == KVisibility.PUBLIC
            },
        )
        classes().that().resideInAPackage("dev.stealing").and().areTopLevelClasses().and(kotlinClass).and(notListed)
            .should(publicInKotlin)
            .check(main)
        // The list does not outlive its classes: each one is there, and private.
        for (name in allowed.keys) {
            withClue(name) { Class.forName(name).kotlin.visibility shouldBe KVisibility.PRIVATE }
        }
    }
})
