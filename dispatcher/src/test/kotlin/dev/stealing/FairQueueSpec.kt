package dev.stealing

import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.ints.shouldBeGreaterThan
import io.kotest.matchers.ints.shouldBeLessThanOrEqual
import io.kotest.matchers.longs.shouldBeGreaterThanOrEqual
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.yield
import java.time.Duration
import java.util.concurrent.CountDownLatch
import java.util.concurrent.Executor
import java.util.concurrent.RejectedExecutionException
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger
import java.util.concurrent.atomic.AtomicIntegerArray

/** What happened to batch A while batch B was served. */
private class Behind(
    /** A tasks started while some B task was queued and not yet started. */
    val whileBWaited: Int,
    /** A tasks still to run when B's first task was submitted. */
    val leftAtStart: Int,
)

/**
 * Batch A (100,000 short tasks) is under way when batch B (1,000) arrives. Fairness is judged by
 * the A tasks that start while B has work waiting, i.e. offered (the offer returned) and not yet
 * started: the submitting thread competes with both workers for 2 cores and may be descheduled
 * between two submissions, or in the middle of one (a claimed but unwritten slot holds back the
 * rest of B's FIFO queue), and A running while B has nothing ready is not unfair. For the same
 * reason [bQueued] (for a fair queue: its depth) must also say that B still has a task in its
 * queue: a B task that a worker has already taken, but whose (virtual) CPU is then stalled
 * before the task starts, is counted as waiting, yet no scheduler can give it to anyone else.
 * Such stalls of a few milliseconds on the shared 2-vCPU VM are the likely cause of two outliers
 * (JDK 25, 2 of 11 runs: 1,722 and 2,306 A tasks counted at 1:3 instead of 333; inferred from
 * their size, about 2 us of A work per task, not observed directly).
 */
private fun itemsOfABehindB(a: Executor, b: Executor, bQueued: () -> Boolean = { true }): Behind {
    val aDone = AtomicInteger()
    val bWaiting = AtomicInteger() // B tasks offered and not started (briefly -1: started before counted)
    val aWhileBWaited = AtomicInteger()
    val allA = CountDownLatch(100_000)
    repeat(100_000) {
        a.execute {
            if (bWaiting.get() > 0 && bQueued()) aWhileBWaited.incrementAndGet()
            spin(2_000)
            aDone.incrementAndGet()
            allA.countDown()
        }
    }
    eventually(30_000) { aDone.get() >= 1_000 } shouldBe true // A is running
    val bDone = CountDownLatch(1_000)
    val aAtStart = aDone.get()
    repeat(1_000) {
        b.execute {
            bWaiting.decrementAndGet()
            spin(2_000)
            bDone.countDown()
        }
        bWaiting.incrementAndGet()
    }
    bDone.await(60, TimeUnit.SECONDS) shouldBe true
    allA.await(60, TimeUnit.SECONDS) shouldBe true
    return Behind(aWhileBWaited.get(), 100_000 - aAtStart)
}

class FairQueueSpec : FunSpec({
    test("a late small batch gets its fair share at once (weights 1:1), while a FIFO executor makes it wait for all of A") {
        StealingDispatcher(2, "fair-ab").use { d ->
            val fifo = itemsOfABehindB(d.executor, d.executor)
            val a = d.fairQueue("A")
            val b = d.fairQueue("B")
            val fair = itemsOfABehindB(a.executor, b.executor) { b.queuedCount() > 0 }
            println(
                "A tasks started while B had work waiting: fair 1:1 -> ${fair.whileBWaited} of ${fair.leftAtStart} left, " +
                    "FIFO -> ${fifo.whileBWaited} of ${fifo.leftAtStart} left",
            )
            fair.leftAtStart shouldBeGreaterThan 10_000 // B really arrived behind a long backlog
            fair.whileBWaited shouldBeLessThanOrEqual 3_000 // 3 x its fair share (1,000 of A alongside B's 1,000)
            fifo.whileBWaited shouldBeGreaterThan fifo.leftAtStart * 95 / 100 // FIFO: B waited for (nearly) all of A
            a.close(); b.close()
        }
    }

    test("weights 1:3: the weight-3 batch gets three times the share") {
        StealingDispatcher(2, "fair-13").use { d ->
            val a = d.fairQueue("A", weight = 1)
            val b = d.fairQueue("B", weight = 3)
            val r = itemsOfABehindB(a.executor, b.executor) { b.queuedCount() > 0 }
            println("A tasks started while B had work waiting, weights 1:3 -> ${r.whileBWaited}")
            r.whileBWaited shouldBeLessThanOrEqual 1_000 // 3 x its fair share (about 333 of A)
            a.close(); b.close()
        }
    }

    test("close: queued work still runs and the queue leaves the rotation; later work is rejected") {
        // No thread injection: the two gated tasks must hold both workers until the gate opens
        // (an injected worker would drain the queue before close and fail "still draining").
        StealingDispatcher(2, "fair-close", StealingOptions(starvationInterval = Duration.ZERO)).use { d ->
            val q = d.fairQueue("closing")
            val gate = CountDownLatch(1)
            val ran = AtomicIntegerArray(1_000)
            val allRan = CountDownLatch(1_000)
            try {
                q.executor.execute { gate.await() }
                q.executor.execute { gate.await() }
                repeat(1_000) { i -> q.executor.execute { ran.incrementAndGet(i); allRan.countDown() } }
                q.close()
                shouldThrow<RejectedExecutionException> { q.executor.execute {} }.message shouldContain "closed"
                d.pool.fair.size shouldBe 1 // still draining
            } finally {
                gate.countDown() // a failed assertion must not leave close() waiting on the gated workers
            }
            // The queue leaves the rotation when its last task is polled, which may be before that task has run.
            allRan.await(10, TimeUnit.SECONDS) shouldBe true
            for (i in 0 until 1_000) ran.get(i) shouldBe 1
            eventually(10_000) { d.pool.fair.size == 0 } shouldBe true
            d.stats().fairQueues shouldBe emptyList()
        }
    }

    test("cancelPending discards the backlog, says how many, and cancels discarded coroutines") {
        StealingDispatcher(1, "fair-discard", StealingOptions(starvationInterval = Duration.ZERO)).use { d ->
            val q = d.fairQueue("discard")
            val gate = CountDownLatch(1)
            val ran = AtomicInteger()
            d.executor.execute { gate.await() } // hold the only worker
            val forked: List<ForkedTask<Int>>
            val coroutine: kotlinx.coroutines.Job
            try {
                repeat(500) { q.executor.execute { ran.incrementAndGet() } }
                forked = List(10) { d.fork { 1 } } // on the global queue, untouched
                val scope = kotlinx.coroutines.CoroutineScope(kotlinx.coroutines.Job())
                coroutine = scope.launch(q) { ran.incrementAndGet() }
                q.cancelPending() shouldBe 501
            } finally {
                gate.countDown() // a failed assertion must not leave close() waiting on the gated worker
            }
            forked.forEach { it.get(10, TimeUnit.SECONDS) shouldBe 1 }
            runBlocking { coroutine.join() }
            coroutine.isCancelled shouldBe true
            ran.get() shouldBe 0
            d.pool.fair.size shouldBe 0
        }
    }

    test("10,000 short-lived queues leave no trace in the rotation") {
        StealingDispatcher(2, "fair-churn").use { d ->
            val done = CountDownLatch(10_000 * 3)
            repeat(10_000) { i ->
                val q = d.fairQueue("q$i", weight = 1 + i % 5)
                repeat(3) { q.executor.execute { done.countDown() } }
                q.close()
            }
            done.await(30, TimeUnit.SECONDS) shouldBe true
            eventually(10_000) { d.pool.fair.size == 0 } shouldBe true
        }
    }

    test("coroutines resume on their fair queue: every step goes through it") {
        StealingDispatcher(2, "fair-resume").use { d ->
            val q = d.fairQueue("resume")
            runBlocking { launch(q) { repeat(100) { yield() } }.join() }
            val s = d.stats().fairQueues.single { it.name == "resume" }
            s.executed shouldBeGreaterThanOrEqual 101 // the first dispatch and every resume after a yield
            q.close()
        }
    }

    test("an idle pool wakes for fair-queue work, every time") {
        val parallelism = 3
        StealingDispatcher(parallelism, "fair-wake", StealingOptions(spinRounds = 0, starvationInterval = Duration.ZERO)).use { d ->
            val q = d.fairQueue()
            repeat(300 * stressMultiplier) { round ->
                val done = CountDownLatch(parallelism)
                val barrier = java.util.concurrent.CyclicBarrier(parallelism)
                // Needs every worker at once: a lost wake-up is a missing party.
                repeat(parallelism) { q.executor.execute { barrier.await(30, TimeUnit.SECONDS); done.countDown() } }
                if (!done.await(30, TimeUnit.SECONDS)) error("round $round hung: ${d.stats()}")
                eventually(10_000) { d.stats().idleThreads == parallelism } shouldBe true
            }
            q.close()
        }
    }

    test("pool close runs the fair work queued before it and rejects later work; bad weights are refused") {
        val d = StealingDispatcher(2, "fair-pool-close")
        val q = d.fairQueue("before-close")
        val ran = AtomicInteger()
        repeat(10_000) { q.executor.execute { ran.incrementAndGet() } }
        d.close()
        ran.get() shouldBe 10_000
        shouldThrow<RejectedExecutionException> { q.executor.execute {} }
        shouldThrow<RejectedExecutionException> { d.fairQueue("after").executor.execute {} }
        shouldThrow<IllegalArgumentException> { d.fairQueue("w", weight = 0) }.message shouldBe "weight must be in 1..1000, was 0"
    }
})
