package dev.stealing

import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.string.shouldStartWith
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import kotlinx.coroutines.yield
import java.util.concurrent.CountDownLatch
import java.util.concurrent.atomic.AtomicInteger

class CoroutineSpec : FunSpec({
    test("withContext(StealingDispatcher) runs on the shared pool's workers") {
        val name = runBlocking { withContext(StealingDispatcher) { Thread.currentThread().name } }
        name shouldStartWith "StealingDispatcher.Default-worker-"
        StealingDispatcher.toString() shouldBe "StealingDispatcher.Default"
    }

    test("an isolated pool used with `use` and withContext") {
        val result = StealingDispatcher(parallelism = 4, name = "iso").use { pool ->
            runBlocking { withContext(pool) { Thread.currentThread().name to 42 } }
        }
        result.first shouldStartWith "iso-worker-"
        result.second shouldBe 42
    }

    test("launch and async fan-out with delay and yield produce the same results as on Default") {
        suspend fun work(scope: CoroutineScope): List<Int> = (1..200).map { i ->
            scope.async {
                if (i % 7 == 0) delay(1)
                if (i % 3 == 0) yield()
                i * i
            }
        }.awaitAll()
        val expected = runBlocking { withContext(Dispatchers.Default) { coroutineScope { work(this) } } }
        StealingDispatcher(3, "fanout").use { d ->
            runBlocking { withContext(d) { coroutineScope { work(this) } } } shouldContainExactly expected
        }
    }

    test("cancellation propagates as on Default") {
        StealingDispatcher(2, "cancel").use { d ->
            val started = CountDownLatch(1)
            val cancelledSeen = AtomicInteger()
            runBlocking {
                val job = launch(d) {
                    try {
                        started.countDown()
                        while (true) yield()
                    } catch (e: CancellationException) {
                        cancelledSeen.incrementAndGet()
                        throw e
                    }
                }
                started.await()
                job.cancel()
                job.join()
                job.isCancelled shouldBe true
            }
            cancelledSeen.get() shouldBe 1
        }
    }

    test("an exception in a child fails the parent scope and cancels siblings, as on Default") {
        StealingDispatcher(2, "failure").use { d ->
            val siblingCancelled = AtomicInteger()
            val siblingStarted = CountDownLatch(1)
            val e = shouldThrow<IllegalStateException> {
                runBlocking(d) {
                    launch {
                        try {
                            siblingStarted.countDown()
                            delay(10_000)
                        } catch (c: CancellationException) {
                            siblingCancelled.incrementAndGet(); throw c
                        }
                    }
                    async<Int> { siblingStarted.await(); throw IllegalStateException("child failed") }.await()
                }
            }
            e.message shouldContain "child failed"
            siblingCancelled.get() shouldBe 1
        }
    }

    test("limitedParallelism follows the kotlinx contract") {
        StealingDispatcher(4, "limited").use { d ->
            shouldThrow<IllegalArgumentException> { d.limitedParallelism(0) }
            val view = d.limitedParallelism(1)
            val active = AtomicInteger()
            val maxActive = AtomicInteger()
            runBlocking {
                List(100) {
                    launch(view) {
                        val now = active.incrementAndGet()
                        maxActive.accumulateAndGet(now) { a, b -> maxOf(a, b) }
                        Thread.sleep(0, 1000)
                        active.decrementAndGet()
                    }
                }.forEach { it.join() }
            }
            maxActive.get() shouldBe 1
        }
    }

    test("toString shows name and size; stats count the work") {
        StealingDispatcher(2, "named").use { d ->
            runBlocking { withContext(d) { coroutineScope { repeat(100) { launch { } } } } }
            d.toString() shouldStartWith "named[parallelism = 2"
            val s = d.stats()
            (s.executed >= 101) shouldBe true
            s.localPops + s.globalPops + s.steals shouldBe s.executed
        }
    }
})

