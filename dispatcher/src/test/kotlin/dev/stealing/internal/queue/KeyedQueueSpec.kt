package dev.stealing.internal.queue

import dev.stealing.testsupport.IdTask
import dev.stealing.testsupport.loadTolerant
import dev.stealing.testsupport.stressMultiplier
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import org.jetbrains.lincheck.datastructures.IntGen
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions
import org.jetbrains.lincheck.datastructures.Operation
import org.jetbrains.lincheck.datastructures.Param
import java.util.concurrent.CyclicBarrier

/**
 * The keyed queue under Lincheck: producers offer from any thread, any thread may close it,
 * the single consumer polls and checks for work. [poll] may return null while an offer (or the
 * close) is between its CAS and its link, so it is checked against a specification where poll
 * retries while [hasWork] says a task is on its way (exactly what the owner worker does before
 * it parks, and what its drain at exit does). An offer after the close must fail; one before it
 * must be polled.
 */
@Param(name = "id", gen = IntGen::class, conf = "0:3")
class KeyedQueueLincheckModel {
    private val queue = KeyedQueue()
    private val tasks = Array(4) { IdTask(it) }

    @Operation
    fun offer(@Param(name = "id") id: Int): Boolean = queue.offer(tasks[id])

    @Operation
    fun close() = queue.close()

    @Operation(nonParallelGroup = "owner")
    fun poll(): Int? {
        while (true) {
            queue.poll()?.let { return (it as IdTask).id }
            if (!queue.hasWork()) return null
        }
    }
}

/** The sequential specification: a FIFO queue that refuses offers once closed. */
class SequentialFifo {
    private val q = ArrayDeque<Int>()
    private var closed = false
    fun offer(id: Int): Boolean = !closed && q.add(id)
    fun close() { closed = true }
    fun poll(): Int? = q.removeFirstOrNull()
}

class KeyedQueueSpec : FunSpec({
    test("model checking: producers against the single consumer") {
        loadTolerant(ModelCheckingOptions())
            .threads(3)
            .actorsPerThread(3)
            .iterations(10 * stressMultiplier)
            .invocationsPerIteration(1_000)
            .sequentialSpecification(SequentialFifo::class.java)
            .check(KeyedQueueLincheckModel::class)
    }

    test("stress: 4 producers x 100,000 tasks, one consumer: each producer's tasks once and in order") {
        val producers = 4
        val perProducer = 100_000 * stressMultiplier
        val queue = KeyedQueue()
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

    test("close racing producers: every offer that returned true is drained, every later one fails") {
        repeat(200 * stressMultiplier) {
            val queue = KeyedQueue()
            val accepted = java.util.concurrent.atomic.AtomicInteger()
            val start = CyclicBarrier(3)
            val producers = List(2) { p ->
                Thread {
                    start.await()
                    for (i in 0 until 2_000) if (queue.offer(IdTask(p * 2_000 + i))) accepted.incrementAndGet() else break
                }.apply { start() }
            }
            start.await()
            var drained = 0
            repeat(500) { if (queue.poll() != null) drained++ }
            queue.drainClosed { drained++ }
            producers.forEach { it.join() }
            queue.offer(IdTask(-1)) shouldBe false
            drained shouldBe accepted.get()
            queue.hasWork() shouldBe false
            queue.size() shouldBe 0
        }
    }

    test("closeAndTakeAll from another thread racing the owner's polls and producers: every accepted task taken once, in order") {
        repeat(200 * stressMultiplier) {
            val queue = KeyedQueue()
            val accepted = java.util.concurrent.atomic.AtomicInteger()
            val takenBy = java.util.concurrent.atomic.AtomicIntegerArray(4_000)
            val start = CyclicBarrier(4)
            val producers = List(2) { p ->
                Thread {
                    start.await()
                    for (i in 0 until 2_000) if (queue.offer(IdTask(p * 2_000 + i))) accepted.incrementAndGet() else break
                }.apply { start() }
            }
            val stopperOrder = IntArray(2) { -1 } // each producer's tasks, oldest first
            var stopperOutOfOrder = 0
            val stopper = Thread {
                start.await()
                repeat(2_000) { Thread.onSpinWait() }
                queue.closeAndTakeAll {
                    val id = (it as IdTask).id
                    takenBy.incrementAndGet(id)
                    if (id < stopperOrder[id / 2_000]) stopperOutOfOrder++
                    stopperOrder[id / 2_000] = id
                }
            }.apply { start() }
            start.await()
            // The owner keeps polling while the stopper takes, and then until nothing is left
            // (it steps over what the stopper took), as a worker runs on for a moment after
            // shutdownNow() took its keyed queue.
            while (stopper.isAlive || queue.hasWork()) {
                val task = queue.poll() as IdTask? ?: continue
                takenBy.incrementAndGet(task.id)
            }
            producers.forEach { it.join() }
            stopper.join()
            queue.drainClosed { takenBy.incrementAndGet((it as IdTask).id) } // what the worker does at exit: finds nothing
            queue.offer(IdTask(0)) shouldBe false
            (0 until 4_000).count { takenBy.get(it) == 1 } shouldBe accepted.get()
            (0 until 4_000).count { takenBy.get(it) > 1 } shouldBe 0
            stopperOutOfOrder shouldBe 0
            queue.hasWork() shouldBe false
            queue.size() shouldBe 0
        }
    }
})
