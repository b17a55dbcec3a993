package dev.stealing

import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.types.shouldBeSameInstanceAs
import java.util.concurrent.CyclicBarrier
import java.util.concurrent.atomic.AtomicInteger
import java.util.concurrent.atomic.AtomicIntegerArray
import kotlin.concurrent.thread

class GlobalQueueSpec : FunSpec({
    test("FIFO across segments") {
        val q = GlobalQueue(segmentCapacity = 4)
        val t = Array(50) { IdTask(it) }
        t.forEach { q.offer(it) shouldBe true }
        q.size() shouldBe 50
        for (i in 0 until 50) q.poll() shouldBeSameInstanceAs t[i]
        q.poll() shouldBe null
    }

    test("a drained segment is reused: steady traffic stays in one ring") {
        val q = GlobalQueue(segmentCapacity = 4)
        repeat(1000) {
            q.offer(IdTask(it)) shouldBe true
            (q.poll() as IdTask).id shouldBe it
        }
    }

    test("pollBatch takes runs in FIFO order across segments") {
        val q = GlobalQueue(segmentCapacity = 4)
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
        val q = GlobalQueue(segmentCapacity = 4)
        repeat(100) { q.offer(IdTask(it)) }
        q.tailCapacity() shouldBe 64 // 4 + 8 + 16 + 32 + 64 >= 100
        while (q.poll() != null) { /* drain */ }
        repeat(60) { q.offer(IdTask(it)) } // fits in the surviving 64-slot ring
        q.tailCapacity() shouldBe 64
        q.size() shouldBe 60
    }

    test("close: later offers fail, earlier ones are still polled, then drained") {
        val q = GlobalQueue(segmentCapacity = 2)
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
        val q = GlobalQueue(segmentCapacity = 8)
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
})
