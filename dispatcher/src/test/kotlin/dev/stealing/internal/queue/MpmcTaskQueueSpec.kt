package dev.stealing.internal.queue

import dev.stealing.testsupport.tailCapacity
import dev.stealing.testsupport.IdTask
import dev.stealing.testsupport.runWithin
import dev.stealing.testsupport.stressMultiplier
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.types.shouldBeSameInstanceAs
import java.util.concurrent.CyclicBarrier
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger
import java.util.concurrent.atomic.AtomicIntegerArray
import kotlin.concurrent.thread

class MpmcTaskQueueSpec : FunSpec({
    test("FIFO across segments") {
        val q = MpmcTaskQueue(segmentCapacity = 4)
        val t = Array(50) { IdTask(it) }
        t.forEach { q.offer(it) shouldBe true }
        q.size() shouldBe 50
        for (i in 0 until 50) q.poll() shouldBeSameInstanceAs t[i]
        q.poll() shouldBe null
    }

    test("a drained segment is reused: steady traffic stays in one ring") {
        val q = MpmcTaskQueue(segmentCapacity = 4)
        repeat(1000) {
            q.offer(IdTask(it)) shouldBe true
            (q.poll() as IdTask).id shouldBe it
        }
    }

    test("pollBatch takes runs in FIFO order across segments") {
        val q = MpmcTaskQueue(segmentCapacity = 4)
        val t = Array(50) { IdTask(it) }
        t.forEach { q.offer(it) }
        val out = arrayOfNulls<Runnable>(8)
        var next = 0
        while (true) {
            val n = q.pollBatch(out)
            if (n == 0) break
            for (k in 0 until n) out[k] shouldBeSameInstanceAs t[next++]
        }
        next shouldBe 50
    }

    test("segments double, so the newest one ends up holding a whole burst") {
        val q = MpmcTaskQueue(segmentCapacity = 4)
        repeat(100) { q.offer(IdTask(it)) }
        q.tailCapacity() shouldBe 64 // 4 + 8 + 16 + 32 + 64 >= 100
        while (q.poll() != null) { /* drain */ }
        repeat(60) { q.offer(IdTask(it)) } // fits in the surviving 64-slot ring
        q.tailCapacity() shouldBe 64
        q.size() shouldBe 60
    }

    test("32-bit sequence numbers: a ring is reused across positions 2^31 and 2^32") {
        for (start in listOf((1L shl 31) - 64, (1L shl 32) - 64)) runWithin(30_000) {
            val q = MpmcTaskQueue(segmentCapacity = 4, firstPosition = start)
            val out = arrayOfNulls<Runnable>(3)
            var next = 0
            repeat(100) { round -> // 300 positions, crossing the boundary at 64
                repeat(3) { q.offer(IdTask(round * 3 + it)) shouldBe true }
                if (round % 2 == 0) {
                    repeat(3) { (q.poll() as IdTask).id shouldBe next++ }
                } else {
                    q.pollBatch(out) shouldBe 3
                    repeat(3) { (out[it] as IdTask).id shouldBe next++ }
                }
                q.poll() shouldBe null
            }
            q.tailCapacity() shouldBe 4 // never closed as full: the same ring all along
        }
    }

    test("32-bit sequence numbers: concurrent producer and consumers across 2^32, each task once") {
        runWithin(90_000) {
            val total = 200_000 * stressMultiplier
            val q = MpmcTaskQueue(segmentCapacity = 64, firstPosition = (1L shl 32) - 64L * 1000)
            val polled = AtomicIntegerArray(total)
            val done = AtomicInteger()
            val rejected = AtomicInteger()
            val outOfOrder = AtomicInteger()
            val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60) // a lost task fails, not hangs
            val start = CyclicBarrier(3)
            val producer = thread(isDaemon = true) {
                start.await()
                for (id in 0 until total) {
                    while (q.size() >= 32) { // keep within one ring
                        if (System.nanoTime() > deadline) return@thread
                        Thread.onSpinWait()
                    }
                    if (!q.offer(IdTask(id))) rejected.incrementAndGet()
                }
            }
            val consumers = List(2) { c ->
                thread(isDaemon = true) {
                    start.await()
                    val out = arrayOfNulls<Runnable>(5)
                    var last = -1 // one producer: each consumer must see increasing ids (FIFO)
                    fun take(id: Int) {
                        if (id <= last) outOfOrder.incrementAndGet()
                        last = id
                        polled.incrementAndGet(id)
                    }
                    while (done.get() < total && System.nanoTime() < deadline) {
                        if (c == 0) {
                            val task = q.poll() as IdTask? ?: continue
                            take(task.id)
                            done.incrementAndGet()
                        } else {
                            val n = q.pollBatch(out)
                            for (k in 0 until n) take((out[k] as IdTask).id)
                            done.addAndGet(n)
                        }
                    }
                }
            }
            producer.join()
            consumers.forEach { it.join() }
            rejected.get() shouldBe 0
            outOfOrder.get() shouldBe 0
            for (id in 0 until total) {
                if (polled[id] != 1) error("task $id polled ${polled[id]} times")
            }
        }
    }

    test("close: later offers fail, earlier ones are still polled, then drained") {
        val q = MpmcTaskQueue(segmentCapacity = 2)
        val t = Array(5) { IdTask(it) }
        t.forEach { q.offer(it) }
        q.close()
        q.offer(IdTask(99)) shouldBe false
        q.isDrained() shouldBe false
        for (i in 0 until 5) q.poll() shouldBeSameInstanceAs t[i]
        q.poll() shouldBe null
        q.isDrained() shouldBe true
        q.close() // idempotent
        q.offer(IdTask(100)) shouldBe false
    }

    test("MPMC with close racing offers: accepted tasks are polled exactly once, rejected never") {
        val producers = 3
        val perProducer = 100_000 * stressMultiplier
        val q = MpmcTaskQueue(segmentCapacity = 8)
        val polled = AtomicIntegerArray(producers * perProducer)
        val accepted = AtomicIntegerArray(producers * perProducer)
        val acceptedCount = AtomicInteger()
        val start = CyclicBarrier(producers + 3) // producers, two consumers, this thread
        val ps = List(producers) { p ->
            thread {
                start.await()
                for (i in 0 until perProducer) {
                    val id = p * perProducer + i
                    if (q.offer(IdTask(id))) {
                        accepted.set(id, 1)
                        acceptedCount.incrementAndGet()
                    }
                }
            }
        }
        val consumers = List(2) { c ->
            thread {
                start.await()
                val out = arrayOfNulls<Runnable>(5)
                while (!q.isDrained()) {
                    if (c == 0) {
                        val task = q.poll() as IdTask? ?: continue
                        polled.incrementAndGet(task.id)
                    } else {
                        val n = q.pollBatch(out)
                        for (k in 0 until n) polled.incrementAndGet((out[k] as IdTask).id)
                    }
                }
            }
        }
        start.await()
        while (acceptedCount.get() < perProducer) Thread.onSpinWait()
        q.close()
        ps.forEach { it.join() }
        consumers.forEach { it.join() }
        for (id in 0 until producers * perProducer) {
            if (polled[id] != accepted[id]) error("task $id accepted=${accepted[id]} polled=${polled[id]}")
        }
    }

    /** A queue whose producers throw [StackOverflowError] between claim and publication for the tasks in [failing]. */
    fun failingQueue(failing: Set<Int>, segmentCapacity: Int = 4): Pair<MpmcTaskQueue, (IdTask) -> Boolean> {
        val q = MpmcTaskQueue(segmentCapacity)
        val current = ThreadLocal<IdTask>()
        q.afterClaim = Runnable { if (current.get().id in failing) throw StackOverflowError("test: between claim and publication") }
        val offer = { t: IdTask ->
            current.set(t)
            try {
                q.offer(t)
            } catch (e: StackOverflowError) {
                false
            }
        }
        return q to offer
    }

    test("a producer that throws between claim and publication leaves its slot skipped: poll takes every later task, in order") {
        // Before the fix the slot stayed claimed and unpublished: every poll returned null for ever.
        val failing = setOf(0, 5, 6, 13, 49)
        val (q, offer) = failingQueue(failing)
        val t = Array(50) { IdTask(it) }
        t.forEach { offer(it) shouldBe (it.id !in failing) }
        q.size() shouldBe 50 // claimed slots, skipped ones included, until a consumer passes them
        for (i in 0 until 50) if (i !in failing) q.poll() shouldBeSameInstanceAs t[i]
        q.poll() shouldBe null
        q.size() shouldBe 0
        q.close()
        q.isDrained() shouldBe true
    }

    test("pollBatch passes over skipped slots, also a run of nothing but skipped ones") {
        val failing = setOf(0, 1, 2, 3, 4, 5, 9, 20, 21)
        val (q, offer) = failingQueue(failing, segmentCapacity = 8)
        val t = Array(30) { IdTask(it) }
        t.forEach { offer(it) }
        val out = arrayOfNulls<Runnable>(4)
        val taken = ArrayList<Int>()
        while (true) {
            val n = q.pollBatch(out)
            if (n == 0) break
            for (k in 0 until n) taken += (out[k] as IdTask).id
        }
        taken shouldBe (0 until 30).filter { it !in failing }
        q.close()
        q.isDrained() shouldBe true
    }

    test("a closed queue with only a skipped slot left drains once a consumer passes it") {
        val (q, offer) = failingQueue(setOf(1))
        offer(IdTask(0)) shouldBe true
        offer(IdTask(1)) shouldBe false
        q.close()
        q.isDrained() shouldBe false // the skipped slot still counts until a consumer passes it
        (q.poll() as IdTask).id shouldBe 0
        q.poll() shouldBe null
        q.isDrained() shouldBe true
    }

    test("skipped slots under racing producers and consumers: every accepted task is taken exactly once") {
        val n = 200_000
        val q = MpmcTaskQueue(segmentCapacity = 64)
        q.afterClaim = Runnable { if (java.util.concurrent.ThreadLocalRandom.current().nextInt(50) == 0) throw StackOverflowError("test") }
        val accepted = AtomicIntegerArray(n)
        val taken = AtomicIntegerArray(n)
        val producersDone = AtomicInteger()
        val start = CyclicBarrier(4)
        val producers = List(2) { p ->
            thread {
                start.await()
                for (i in p until n step 2) {
                    try {
                        if (q.offer(IdTask(i))) accepted.set(i, 1)
                    } catch (e: StackOverflowError) { /* not accepted */ }
                }
                producersDone.incrementAndGet()
            }
        }
        val consumers = List(2) { c ->
            thread {
                start.await()
                val out = arrayOfNulls<Runnable>(8)
                while (true) {
                    val got = if (c == 0) q.pollBatch(out) else (q.poll()?.let { out[0] = it; 1 } ?: 0)
                    for (k in 0 until got) taken.incrementAndGet((out[k] as IdTask).id)
                    if (got == 0 && producersDone.get() == 2 && q.size() == 0) break
                }
            }
        }
        (producers + consumers).forEach { it.join(60_000) }
        var skipped = 0
        for (i in 0 until n) {
            if (accepted.get(i) == 0) skipped++
            taken.get(i) shouldBe accepted.get(i)
        }
        (skipped > 0) shouldBe true
    }
})
