package dev.stealing

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
})
