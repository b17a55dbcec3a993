package dev.stealing.internal.queue

import dev.stealing.testsupport.IdTask
import dev.stealing.testsupport.loadTolerant
import dev.stealing.testsupport.stressMultiplier
import io.kotest.core.spec.style.FunSpec
import org.jetbrains.lincheck.datastructures.IntGen
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions
import org.jetbrains.lincheck.datastructures.Operation
import org.jetbrains.lincheck.datastructures.Param
import org.jetbrains.lincheck.datastructures.StressOptions

/**
 * The deque under Lincheck: owner operations (push, pop, pollOldest, tryRemove with [SameTask],
 * popIfNewest, popNewestIf, clearTakenIfEmpty) confined to one thread, steals from the others,
 * an initial capacity of 2 so that growth happens inside the scenarios. Linearizable against [SequentialDeque]. The deque has no explicit owner:
 * it binds to the first thread that runs an owner operation, and its owner assertion (tests run
 * with `-ea`) would turn an owner operation on any other thread into a failed scenario.
 */
@Param(name = "id", gen = IntGen::class, conf = "0:3")
class WorkDequeLincheckModel {
    private val deque = WorkDeque(initialCapacity = 2, checksOwner = false) // the owner group confines the owner ops
    private val tasks = Array(4) { IdTask(it) }

    @Operation(nonParallelGroup = "owner")
    fun push(@Param(name = "id") id: Int) {
        // The answer "looked empty" is a hint (a steal between its read of top and the push can
        // make it stale), not part of the deque's sequential contract: not compared.
        deque.push(tasks[id])
    }

    @Operation(nonParallelGroup = "owner")
    fun pop(): Int? = (deque.pop() as IdTask?)?.id

    @Operation(nonParallelGroup = "owner")
    fun pollOldest(): Int? = (deque.pollOldest() as IdTask?)?.id

    @Operation(nonParallelGroup = "owner")
    fun tryRemove(@Param(name = "id") id: Int): Int? = (deque.tryRemove(tasks[id], SameTask).task as IdTask?)?.id

    /** Clears the slots of taken tasks when empty: must never touch a queued task (a thief would then steal null). */
    @Operation(nonParallelGroup = "owner")
    fun clearTakenIfEmpty() = deque.clearTakenIfEmpty()

    @Operation(nonParallelGroup = "owner")
    fun popIfNewest(@Param(name = "id") id: Int): Boolean = deque.popIfNewest(tasks[id])

    @Operation(nonParallelGroup = "owner")
    fun popNewestIf(@Param(name = "id") id: Int): Int? = (deque.popNewestIf(tasks[id], SameTask) as IdTask?)?.id

    @Operation
    fun steal(): Int? {
        while (true) {
            val r = deque.steal()
            if (!r.isRetry) return (r.taskOrNull as IdTask?)?.id
        }
    }
}

/** The sequential specification: a double-ended queue where thieves take the oldest. */
class SequentialDeque {
    private val d = ArrayDeque<Int>()
    fun push(id: Int) = d.addLast(id)
    fun pop(): Int? = d.removeLastOrNull()
    fun pollOldest(): Int? = d.removeFirstOrNull()
    fun tryRemove(id: Int): Int? {
        val i = d.lastIndexOf(id)
        if (i < 0) return null
        d.removeAt(i)
        return id
    }
    fun clearTakenIfEmpty() {}
    fun popIfNewest(id: Int): Boolean = if (d.lastOrNull() == id) { d.removeLast(); true } else false
    fun popNewestIf(id: Int): Int? = if (d.lastOrNull() == id) d.removeLast() else null
    fun steal(): Int? = d.removeFirstOrNull()
}

class WorkDequeLincheckSpec : FunSpec({
    test("model checking: owner push/pop/pollOldest/tryRemove/popIfNewest against two thieves") {
        loadTolerant(ModelCheckingOptions())
            .threads(3)
            .actorsPerThread(4)
            .actorsBefore(3)
            // 40 took 176 s idle and over 300 s beside two burners, so the default build runs 10;
            // -Pstress runs 20 per multiplier (400).
            .iterations(if (stressMultiplier > 1) 20 * stressMultiplier else 10)
            .invocationsPerIteration(2_000)
            .sequentialSpecification(SequentialDeque::class.java)
            .check(WorkDequeLincheckModel::class)
    }

    test("model checking: a thief never answers empty while a removal hides newer tasks") {
        // The interleaving the stress test once found beside two busy CPUs: tryRemove of the
        // oldest task lowers bottom to it, hiding the newer task from a concurrent thief, which
        // then read top == bottom and answered empty although a task stayed queued throughout.
        loadTolerant(ModelCheckingOptions())
            .iterations(0) // only the scenario below
            .invocationsPerIteration(5_000)
            .addCustomScenario {
                initial {
                    actor(WorkDequeLincheckModel::push, 0)
                    actor(WorkDequeLincheckModel::push, 3)
                }
                parallel {
                    thread { actor(WorkDequeLincheckModel::tryRemove, 0) }
                    thread { actor(WorkDequeLincheckModel::steal) }
                }
            }
            .sequentialSpecification(SequentialDeque::class.java)
            .check(WorkDequeLincheckModel::class)
    }

    test("stress: owner push/pop/pollOldest/tryRemove/popIfNewest against two thieves") {
        loadTolerant(StressOptions())
            .threads(3)
            .actorsPerThread(5)
            .actorsBefore(3)
            // Real threads: beside busy CPUs they mostly wait for each other (4,500 invocations
            // took 139 s beside two busy CPUs, 58 s idle). It found the hiding bug that the
            // custom scenario above now pins, so it stays in the default build.
            .iterations(10 * stressMultiplier)
            .invocationsPerIteration(if (stressMultiplier > 1) 2_000 else 300) // 2,000: 149 s beside two burners
            .sequentialSpecification(SequentialDeque::class.java)
            .check(WorkDequeLincheckModel::class)
    }
})
