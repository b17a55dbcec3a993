package dev.stealing

import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import org.jetbrains.lincheck.datastructures.IntGen
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions
import org.jetbrains.lincheck.datastructures.Operation
import org.jetbrains.lincheck.datastructures.Param
import java.util.concurrent.CyclicBarrier

/**
 * The personal queue under Lincheck: producers offer from any thread, the single consumer polls
 * and checks for work. [poll] may return null while an offer is between its exchange and its
 * link, so it is checked against a specification where poll retries while [hasWork] says a task
 * is on its way (exactly what the owner worker does before it parks).
 */
@Param(name = "id", gen = IntGen::class, conf = "0:3")
class AffinityQueueLincheckModel {
    private val queue = AffinityQueue()
    private val tasks = Array(4) { IdTask(it) }

    @Operation
    fun offer(@Param(name = "id") id: Int) = queue.offer(tasks[id])

    @Operation(nonParallelGroup = "owner")
    fun poll(): Int? {
        while (true) {
            queue.poll()?.let { return (it as IdTask).id }
            if (!queue.hasWork()) return null
        }
    }
}

/** The sequential specification: a FIFO queue. */
class SequentialFifo {
    private val q = ArrayDeque<Int>()
    fun offer(id: Int) = q.addLast(id)
    fun poll(): Int? = q.removeFirstOrNull()
}

class AffinityQueueSpec : FunSpec({
    test("model checking: producers against the single consumer") {
        ModelCheckingOptions()
            .threads(3)
            .actorsPerThread(3)
            .iterations(10 * stressMultiplier)
            .invocationsPerIteration(1_000)
            .sequentialSpecification(SequentialFifo::class.java)
            .check(AffinityQueueLincheckModel::class)
    }

    test("stress: 4 producers x 100,000 tasks, one consumer: each producer's tasks once and in order") {
        val producers = 4
        val perProducer = 100_000 * stressMultiplier
        val queue = AffinityQueue()
        val start = CyclicBarrier(producers + 1)
        val threads = List(producers) { p ->
            Thread {
                start.await()
                for (i in 0 until perProducer) queue.offer(IdTask(p * perProducer + i))
            }.apply { start() }
        }
        start.await()
        val next = IntArray(producers)
        var taken = 0
        while (taken < producers * perProducer) {
            val task = queue.poll() as IdTask? ?: continue
            val p = task.id / perProducer
            task.id % perProducer shouldBe next[p] // FIFO per producer, nothing skipped or repeated
            next[p]++
            taken++
        }
        threads.forEach { it.join() }
        queue.poll() shouldBe null
        queue.hasWork() shouldBe false
    }
})
