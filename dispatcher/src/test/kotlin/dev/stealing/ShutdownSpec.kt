package dev.stealing

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
})
