package dev.stealing

import dev.stealing.testsupport.eventually
import dev.stealing.testsupport.runWithin
import dev.stealing.testsupport.stressMultiplier
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import java.time.Duration
import java.util.concurrent.CountDownLatch
import java.util.concurrent.CyclicBarrier
import java.util.concurrent.RejectedExecutionException
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger
import java.util.concurrent.atomic.AtomicIntegerArray
import kotlin.concurrent.thread

/**
 * Closing a fair queue and the pool under it: queued work still runs or is discarded
 * (cancelPending) and counted, later work is rejected, and under racing offers every task runs,
 * is discarded, handed back or rejected exactly once.
 */
class FairQueueCloseSpec : FunSpec({
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

    test("pool close runs the fair work queued before it and rejects later work; bad weights are refused") {
        val d = StealingDispatcher(2, "fair-pool-close")
        val q = d.fairQueue("before-close")
        val ran = AtomicInteger()
        repeat(10_000) { q.executor.execute { ran.incrementAndGet() } }
        d.close()
        ran.get() shouldBe 10_000
        shouldThrow<RejectedExecutionException> { q.executor.execute {} }
        shouldThrow<IllegalStateException> { d.fairQueue("after") } // a new queue on a closed pool: refused (ApiEdgesSpec)
        shouldThrow<IllegalArgumentException> { d.fairQueue("w", weight = 0) }.message shouldBe "weight must be in 1..1000, was 0"
    }
    test("close, cancelPending and shutdownNow racing offers: every task runs, is discarded, handed back or rejected, once") {
        // A stranded task would also hang the pool's close: fail instead of hanging the build.
        runWithin(120_000) {
            repeat(10 * stressMultiplier) { round ->
                val cap = 200_000
                val runs = AtomicIntegerArray(cap)
                val fates = AtomicIntegerArray(cap) // handed back or rejected late: 1 each
                val ids = java.util.concurrent.atomic.AtomicInteger()
                val accepted = java.util.concurrent.atomic.AtomicInteger()
                val rejected = java.util.concurrent.atomic.AtomicInteger()
                // Tasks a worker took in a turn (its deque) when the stop came reach the handler.
                val handler = TaskExceptionHandler { task, e ->
                    if (e is RejectedExecutionException && task is LedgerTask) fates.incrementAndGet(task.id)
                }
                val d = StealingDispatcher(2, "fair-race-$round", StealingOptions(exceptionHandler = handler))
                val queues = List(8) { d.fairQueue("q$it", weight = 1 + it % 4) }
                /** Offers a new task to [q]; false if it was rejected. Some tasks offer a child from their worker. */
                fun offer(q: FairQueueDispatcher): Boolean {
                    val id = ids.getAndIncrement()
                    if (id >= cap) return false
                    val task = LedgerTask(id, runs) { if (id % 5 == 0) offer(queues[(id / 5) % queues.size]) }
                    return try {
                        q.executor.execute(task)
                        accepted.incrementAndGet()
                        true
                    } catch (e: RejectedExecutionException) {
                        rejected.incrementAndGet()
                        false
                    }
                }
                val start = CyclicBarrier(4)
                val producers = List(3) { p ->
                    thread(name = "fair-race-producer-$p") {
                        start.await(10, TimeUnit.SECONDS)
                        val open = queues.toMutableList()
                        var k = p
                        while (open.isNotEmpty() && ids.get() < cap) {
                            val q = open[k++ % open.size]
                            if (!offer(q)) open.remove(q)
                        }
                    }
                }
                start.await(10, TimeUnit.SECONDS)
                fun awaitIds(n: Int) {
                    val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30)
                    while (ids.get() < n) {
                        check(System.nanoTime() < deadline) { "round $round: the producers issued only ${ids.get()} tasks" }
                        Thread.onSpinWait()
                    }
                }
                awaitIds(2_000)
                queues[0].close()
                queues[1].close()
                awaitIds(4_000)
                val discarded = queues[2].cancelPending() + queues[3].cancelPending()
                awaitIds(8_000)
                val handedBack = d.executor.shutdownNow()
                for (t in handedBack) fates.incrementAndGet((t as LedgerTask).id)
                producers.forEach { it.join(30_000) }
                d.executor.awaitTermination(10, TimeUnit.SECONDS) shouldBe true
                val issued = minOf(ids.get(), cap)
                (accepted.get() + rejected.get()) shouldBe issued
                var ranOrBack = 0
                for (i in 0 until issued) {
                    val n = runs.get(i) + fates.get(i)
                    if (n > 1) error("round $round: task $i ran ${runs.get(i)} times and was handed back or rejected ${fates.get(i)} times")
                    ranOrBack += n
                }
                (ranOrBack + discarded) shouldBe accepted.get()
            }
        }
    }
})
