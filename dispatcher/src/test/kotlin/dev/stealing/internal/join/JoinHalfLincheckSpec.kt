package dev.stealing.internal.join

import dev.stealing.internal.jvm.StackHeadroom
import dev.stealing.internal.queue.WorkDeque
import dev.stealing.testsupport.loadTolerant
import dev.stealing.testsupport.stressMultiplier
import io.kotest.core.spec.style.FunSpec
import org.jetbrains.lincheck.datastructures.IntGen
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions
import org.jetbrains.lincheck.datastructures.Operation
import org.jetbrains.lincheck.datastructures.Param
import org.jetbrains.lincheck.datastructures.Validate
import org.jetbrains.lincheck.datastructures.forClasses
import java.util.concurrent.atomic.AtomicIntegerArray

/**
 * The claim protocol of the blocking fork/join under Lincheck: the owner pushes halves onto its
 * deque ([fork]) and takes them back as `forkJoinOnWorker` does ([takeBack]: pop it if it is the
 * newest entry, with no CAS, else claim it by CAS), while thieves steal entries and run them
 * ([JoinHalf.run]: skip a dead entry, else claim by CAS and compute). The operations answer
 * nothing that a sequential order must explain (a steal and its claim are two steps, so "who
 * ran it" is not linearizable as one step); [exactlyOnce] checks the outcome after every
 * scenario: no half runs twice, and a half its owner took back ran exactly once, by the owner
 * (its takeBack said so) or by a thief (it said it lost the claim).
 */
@Param(name = "id", gen = IntGen::class, conf = "0:2")
class JoinHalfLincheckModel {
    private val deque = WorkDeque(initialCapacity = 2, checksOwner = false) // the owner group confines the owner ops
    private val runs = AtomicIntegerArray(3)
    private val halves = Array(3) { id ->
        object : JoinHalf<Unit>() {
            override fun compute() {
                runs.incrementAndGet(id)
            }
        }
    }

    // Owner-only state (the owner group runs on one thread).
    private val pushed = BooleanArray(3)
    private val takenBack = BooleanArray(3)

    @Operation(nonParallelGroup = "owner")
    fun fork(@Param(name = "id") id: Int) {
        if (pushed[id]) return // each half is pushed once, as forkJoinOnWorker does
        pushed[id] = true
        deque.push(halves[id])
    }

    @Operation(nonParallelGroup = "owner")
    fun takeBack(@Param(name = "id") id: Int) {
        if (!pushed[id] || takenBack[id]) return
        takenBack[id] = true
        val half = halves[id]
        if (half.takeBack(deque)) half.compute()
    }

    @Operation
    fun steal() {
        while (true) {
            val r = deque.steal()
            if (r.isRetry) continue
            r.taskOrNull?.run()
            return
        }
    }

    @Validate
    fun exactlyOnce() {
        for (id in 0 until 3) {
            val n = runs.get(id)
            check(n <= 1) { "half $id ran $n times" }
            if (takenBack[id]) check(n == 1) { "half $id was taken back but ran $n times" }
        }
    }
}

class JoinHalfLincheckSpec : FunSpec({
    test("model checking: each half runs at most once, and exactly once once its owner took it back") {
        loadTolerant(ModelCheckingOptions())
            // The stack reserve is a plain recursion with no shared state, which the model checker
            // would take for a livelock.
            .addGuarantee(forClasses(StackHeadroom::class).allMethods().ignore())
            .threads(3)
            .actorsPerThread(3)
            .actorsBefore(2)
            .iterations(if (stressMultiplier > 1) 20 * stressMultiplier else 10) // default build: half, for its time budget
            .invocationsPerIteration(2_000)
            .check(JoinHalfLincheckModel::class)
    }
})
