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
import java.util.Collections
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

    test("yield lets other coroutines run, even on a single worker") {
        StealingDispatcher(1, "yield").use { d ->
            val order = Collections.synchronizedList(ArrayList<String>())
            runBlocking {
                withContext(d) {
                    val a = launch { repeat(3) { order += "a$it"; yield() } }
                    val b = launch { repeat(3) { order += "b$it"; yield() } }
                    a.join(); b.join()
                }
            }
            order.size shouldBe 6
            // yield() queues behind the other coroutine: the two strictly alternate.
            for (i in 1 until order.size) (order[i][0] != order[i - 1][0]) shouldBe true
        }
    }

    test("a long yield loop does not starve work queued from outside") {
        StealingDispatcher(1, "no-starve").use { d ->
            val outsideRan = CountDownLatch(1)
            runBlocking {
                val spinner = launch(d) { while (outsideRan.count > 0) yield() }
                d.executor.execute { outsideRan.countDown() }
                spinner.join()
            }
        }
    }

    test("a local LIFO stream does not starve work queued from outside or older local work") {
        StealingDispatcher(1, "lifo-stream").use { d ->
            val outsideRan = CountDownLatch(1)
            val oldLocalRan = CountDownLatch(1)
            d.executor.execute {
                d.executor.execute { oldLocalRan.countDown() } // at the bottom of the deque
                // Keep pushing a new task on top of it forever, until both others ran.
                fun chain(): Runnable = Runnable {
                    if (outsideRan.count > 0 || oldLocalRan.count > 0) d.executor.execute(chain())
                }
                d.executor.execute(chain())
            }
            d.executor.execute { outsideRan.countDown() }
            outsideRan.await(10, java.util.concurrent.TimeUnit.SECONDS) shouldBe true
            oldLocalRan.await(10, java.util.concurrent.TimeUnit.SECONDS) shouldBe true
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
