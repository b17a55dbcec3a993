package dev.stealing

import dev.stealing.testsupport.eventually
import dev.stealing.testsupport.stressMultiplier
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import java.time.Duration
import java.util.concurrent.CountDownLatch
import java.util.concurrent.CyclicBarrier
import java.util.concurrent.RejectedExecutionException
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicBoolean
import java.util.concurrent.atomic.AtomicInteger
import java.util.concurrent.atomic.AtomicLong
import kotlin.concurrent.thread

class ShutdownSpec : FunSpec({
    test("close racing submissions from several threads: executed + rejected == submitted") {
        repeat(20 * stressMultiplier) { round ->
            val executed = AtomicLong()
            val rejected = AtomicLong()
            val submitted = AtomicLong()
            val d = StealingDispatcher(2, "race-$round")
            val start = CyclicBarrier(4)
            val producers = List(3) { p ->
                thread {
                    start.await()
                    while (true) {
                        submitted.incrementAndGet()
                        try {
                            // Half the tasks fork a child from inside the pool as well.
                            d.executor.execute {
                                executed.incrementAndGet()
                                if (p == 0) {
                                    submitted.incrementAndGet()
                                    try {
                                        d.executor.execute { executed.incrementAndGet() }
                                    } catch (e: RejectedExecutionException) {
                                        rejected.incrementAndGet()
                                    }
                                }
                            }
                        } catch (e: RejectedExecutionException) {
                            rejected.incrementAndGet()
                            break
                        }
                    }
                }
            }
            start.await()
            Thread.sleep(2) // let submissions pile up; the race is the subject
            d.close()
            producers.forEach { it.join() }
            d.executor.isTerminated shouldBe true
            (executed.get() + rejected.get()) shouldBe submitted.get()
            d.stats().rejected shouldBe rejected.get()
        }
    }

    test("close runs everything queued and joins the threads") {
        val d = StealingDispatcher(2, "drain")
        val ran = AtomicInteger()
        val gate = CountDownLatch(1)
        d.executor.execute { gate.await() }
        repeat(10_000) { d.executor.execute { ran.incrementAndGet() } }
        thread { Thread.sleep(20); gate.countDown() }
        d.close()
        ran.get() shouldBe 10_000
        d.executor.isTerminated shouldBe true
        d.stats().threads shouldBe 0
        shouldThrow<RejectedExecutionException> { d.executor.execute {} }.message shouldContain "drain"
    }

    test("close of a pool that never ran anything starts no thread") {
        val d = StealingDispatcher(4, "unused")
        d.close()
        d.executor.isTerminated shouldBe true
        d.stats().executed shouldBe 0
    }

    test("shutdownNow returns the tasks not yet started") {
        // No thread injection: an extra thread started for the waiting worker would run queued tasks.
        val d = StealingDispatcher(1, "now", StealingOptions(starvationInterval = Duration.ZERO))
        val started = CountDownLatch(1)
        val release = CountDownLatch(1)
        d.executor.execute { started.countDown(); release.await() }
        started.await(10, TimeUnit.SECONDS) shouldBe true
        val tasks = List(100) { Runnable {} }
        tasks.forEach(d.executor::execute)
        val unstarted = d.executor.shutdownNow()
        unstarted.toSet() shouldBe tasks.toSet()
        release.countDown()
        d.executor.awaitTermination(10, TimeUnit.SECONDS) shouldBe true
    }

    test("a coroutine dispatched to a closed dispatcher is cancelled, as with kotlinx executors") {
        val d = StealingDispatcher(2, "closed")
        d.close()
        runBlocking {
            val job = launch(d) { error("must not run") }
            job.join()
            job.isCancelled shouldBe true
        }
        shouldThrow<CancellationException> {
            runBlocking { kotlinx.coroutines.withContext(d) { 1 } }
        }
    }

    test("the shared Default cannot be closed") {
        shouldThrow<UnsupportedOperationException> { StealingDispatcher.executor.shutdown() }
        shouldThrow<UnsupportedOperationException> { StealingDispatcher.executor.shutdownNow() }
    }

    test("awaitTermination with a zero or negative timeout does not wait: false while running, true once terminated (ThreadPoolExecutor)") {
        val d = StealingDispatcher(1, "await-zero")
        d.executor.awaitTermination(-1, TimeUnit.SECONDS) shouldBe false
        d.executor.awaitTermination(0, TimeUnit.SECONDS) shouldBe false
        d.executor.awaitTermination(Long.MIN_VALUE, TimeUnit.DAYS) shouldBe false
        d.close()
        d.executor.awaitTermination(-1, TimeUnit.SECONDS) shouldBe true
        d.executor.awaitTermination(0, TimeUnit.SECONDS) shouldBe true
    }

    test("review: close() called from a task of the pool returns, and the pool then terminates") {
        val d = StealingDispatcher(2, "self-close")
        val returned = CountDownLatch(1)
        d.executor.execute { d.close(); returned.countDown() }
        returned.await(10, TimeUnit.SECONDS) shouldBe true
        d.executor.awaitTermination(10, TimeUnit.SECONDS) shouldBe true
    }

    test("review: after shutdown, a running task may fork locally and wait for it: an idle worker still helps") {
        val d = StealingDispatcher(2, "fork-after-close", StealingOptions(spinRounds = 0, starvationInterval = Duration.ZERO))
        val ex = d.executor
        val bothStarted = CyclicBarrier(2)
        repeat(2) { ex.execute { bothStarted.await(10, TimeUnit.SECONDS) } }
        val go = CountDownLatch(1)
        val yRan = CountDownLatch(1)
        val result = AtomicBoolean()
        ex.execute {
            go.await()
            // Let the other worker go idle after the shutdown (it must not have exited).
            val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5)
            while (d.stats().idleThreads < 1 && System.nanoTime() < deadline) Thread.sleep(1)
            ex.execute { yRan.countDown() } // accepted: a continuation of accepted work
            result.set(yRan.await(10, TimeUnit.SECONDS)) // blocks this worker: only the other can run Y
        }
        ex.shutdown()
        go.countDown()
        ex.awaitTermination(30, TimeUnit.SECONDS) shouldBe true
        result.get() shouldBe true
    }

    test("review: shutdownNow racing submissions: executed + rejected + handed back + rejected late == submitted") {
        repeat(20 * stressMultiplier) { round ->
            val executed = AtomicLong()
            val rejected = AtomicLong()
            val submitted = AtomicLong()
            // Tasks a worker had already taken (a batch from the global queue) when the stop came
            // are neither run nor handed back: they reach the handler as rejected.
            val rejectedLate = AtomicLong()
            val handler = TaskExceptionHandler { _, e -> if (e is RejectedExecutionException) rejectedLate.incrementAndGet() }
            val d = StealingDispatcher(2, "now-race-$round", StealingOptions(exceptionHandler = handler))
            val start = CyclicBarrier(4)
            val producers = List(3) {
                thread {
                    start.await()
                    while (true) {
                        submitted.incrementAndGet()
                        try {
                            d.executor.execute { executed.incrementAndGet() }
                        } catch (e: RejectedExecutionException) {
                            rejected.incrementAndGet()
                            break
                        }
                    }
                }
            }
            start.await()
            Thread.sleep(2) // let submissions pile up; the race is the subject
            val handedBack = d.executor.shutdownNow().size
            producers.forEach { it.join() }
            d.executor.awaitTermination(10, TimeUnit.SECONDS) shouldBe true
            (executed.get() + rejected.get() + handedBack + rejectedLate.get()) shouldBe submitted.get()
            d.stats().rejected shouldBe rejected.get() + rejectedLate.get()
        }
    }

    test("review: shutdownNow cancels the forked tasks it hands back, so a join waiting for one ends") {
        // maxThreads = 1: no thread may be started in the blocked joiner's place, so the child stays queued.
        val d = StealingDispatcher(1, "now-join", StealingOptions(maxThreads = 1))
        val parentRunning = CountDownLatch(1)
        val childQueued = CountDownLatch(1)
        val childRef = java.util.concurrent.atomic.AtomicReference<ForkedTask<Int>>()
        val outcome = java.util.concurrent.atomic.AtomicReference<Any?>()
        d.executor.execute {
            parentRunning.countDown()
            childQueued.await()
            // The child sits in the global queue behind this task: the only worker blocks here.
            outcome.set(runCatching { childRef.get().join() }.exceptionOrNull())
        }
        parentRunning.await(10, TimeUnit.SECONDS) shouldBe true
        childRef.set(d.fork { 1 }) // from outside, while the only worker runs the parent: global queue
        childQueued.countDown()
        val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10)
        while (d.stats().blockedJoins < 1 && System.nanoTime() < deadline) Thread.sleep(1)
        d.stats().blockedJoins shouldBe 1
        val handedBack = d.executor.shutdownNow()
        handedBack shouldBe listOf(childRef.get())
        childRef.get().isCancelled shouldBe true
        d.executor.awaitTermination(10, TimeUnit.SECONDS) shouldBe true
        (outcome.get() is java.util.concurrent.CancellationException) shouldBe true
    }

    test("review: awaitTermination from a task of the pool fails fast instead of waiting for itself") {
        StealingDispatcher(1, "await-self").use { d ->
            val error = d.executor.submit<Throwable?> {
                runCatching { d.executor.awaitTermination(1, TimeUnit.SECONDS) }.exceptionOrNull()
            }.get(10, TimeUnit.SECONDS)
            (error is IllegalStateException) shouldBe true
        }
    }

    test("a fair-queue task on a fresh pool racing close() runs: the pool does not terminate while its submitter is on its way to start the first worker") {
        // The submitter's offer got in before the close; it then stops just before starting the
        // first worker. Before the fix, close() found no live worker and a drained global queue,
        // terminated the pool, and the start was refused: the task was neither run nor rejected.
        val d = StealingDispatcher(1, "fair-close-race", StealingOptions(starvationInterval = Duration.ZERO))
        val q = d.fairQueue("q")
        val ran = CountDownLatch(1)
        val submitterThread = java.util.concurrent.atomic.AtomicReference<Thread>()
        val closer = thread(start = false, name = "fair-close-race-closer") { d.close() }
        d.pool.threads.beforeWorkerStart = Runnable {
            if (Thread.currentThread() === submitterThread.get()) {
                d.pool.threads.beforeWorkerStart = null
                closer.start()
                // close() has terminated the pool (the defect), or waits for it to terminate (the fix).
                eventually(10_000) {
                    closer.state == Thread.State.TERMINATED ||
                        (closer.state == Thread.State.TIMED_WAITING && closer.stackTrace.any { it.methodName == "awaitTermination" })
                } shouldBe true
            }
        }
        val outcome = java.util.concurrent.atomic.AtomicReference<String>()
        val submitter = thread(start = false) {
            outcome.set(
                try {
                    q.executor.execute { ran.countDown() }
                    "accepted"
                } catch (e: RejectedExecutionException) {
                    "rejected"
                },
            )
        }
        submitterThread.set(submitter)
        submitter.start()
        submitter.join(10_000)
        closer.join(10_000)
        closer.isAlive shouldBe false
        outcome.get() shouldBe "accepted"
        ran.await(10, TimeUnit.SECONDS) shouldBe true
        d.pool.isTerminated() shouldBe true
    }

    test("fair-queue tasks on fresh pools racing close(): every one runs or is rejected (a loop of fresh pools)") {
        val rounds = 2_000 * stressMultiplier
        var lost = 0
        var rejected = 0
        repeat(rounds) { round ->
            val d = StealingDispatcher(1, "fair-close-$round")
            val q = d.fairQueue("q")
            val ran = AtomicBoolean()
            var refused = false
            val start = CyclicBarrier(2)
            val submitter = thread {
                start.await()
                try {
                    q.executor.execute { ran.set(true) }
                } catch (e: RejectedExecutionException) {
                    refused = true
                }
            }
            start.await()
            d.close()
            submitter.join(10_000)
            if (refused) rejected++ else if (!ran.get()) lost++
        }
        println("fair-queue close race on fresh pools: $rounds rounds, $rejected rejected, $lost lost")
        lost shouldBe 0
    }

    test("close() returns after the starvation monitor's thread has ended, even when the first worker starts as the pool closes") {
        // The first worker's start is still returning when another thread closes the pool: the
        // worker runs its task, the pool quiesces and terminates. Before the fix the monitor was
        // started after that, when close() had already returned: a monitor thread outlived close().
        val d = StealingDispatcher(1, "monitor-close")
        val monitor = d.pool.monitor!!
        val monitorAtClose = java.util.concurrent.atomic.AtomicReference<Thread.State>()
        d.pool.threads.threadStarter = java.util.function.Consumer { t ->
            t.start()
            val closer = thread(name = "monitor-close-closer") { d.close() }
            closer.join(10_000)
            monitorAtClose.set(if (closer.isAlive) null else monitor.state)
        }
        d.executor.execute { }
        monitorAtClose.get() shouldBe Thread.State.TERMINATED
    }
})
