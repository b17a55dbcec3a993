package dev.stealing

import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.types.shouldBeInstanceOf
import java.io.IOException
import java.time.Duration
import java.util.concurrent.CancellationException
import java.util.concurrent.CompletionException
import java.util.concurrent.CountDownLatch
import java.util.concurrent.ExecutionException
import java.util.concurrent.RejectedExecutionException
import java.util.concurrent.TimeUnit
import java.util.concurrent.TimeoutException
import java.util.concurrent.atomic.AtomicInteger

class ForkJoinSpec : FunSpec({
    fun fib(d: StealingDispatcher, n: Int): Int {
        if (n < 2) return n
        val f1 = d.fork { fib(d, n - 1) }
        val f2 = fib(d, n - 2)
        return f1.join() + f2
    }

    test("a fork/join tree on a pool of parallelism 1 completes, inlining every join") {
        StealingDispatcher(1, "fj1").use { d ->
            d.fork { fib(d, 20) }.join() shouldBe 6765
            val s = d.stats()
            (s.inlined > 0) shouldBe true
            s.blockedJoins shouldBe 0
        }
    }

    test("fib on 4 workers: correct, with steals and inlines") {
        StealingDispatcher(4, "fj4").use { d ->
            d.fork { fib(d, 25) }.join() shouldBe 75025
            (d.stats().inlined > 0) shouldBe true
        }
    }

    test("join from outside the pool blocks until done") {
        StealingDispatcher(2, "outside").use { d ->
            val gate = CountDownLatch(1)
            val t = d.fork { gate.await(); 5 }
            Thread { Thread.sleep(10); gate.countDown() }.start()
            t.join() shouldBe 5
            t.get() shouldBe 5
            t.isDone shouldBe true
        }
    }

    test("executor.submit returns ForkedTask and invokeAll works") {
        StealingDispatcher(2, "submit").use { d ->
            d.executor.submit<Int> { 3 }.shouldBeInstanceOf<ForkedTask<Int>>().join() shouldBe 3
            d.executor.invokeAll(List(10) { i -> java.util.concurrent.Callable { i } }).sumOf { it.get() } shouldBe 45
        }
    }

    test("failures: join rethrows unchecked as is and wraps checked; get wraps in ExecutionException") {
        StealingDispatcher(2, "fj-fail").use { d ->
            val unchecked = d.fork<Int> { throw IllegalStateException("x") }
            shouldThrow<IllegalStateException> { unchecked.join() }
            shouldThrow<ExecutionException> { unchecked.get() }.cause.shouldBeInstanceOf<IllegalStateException>()
            val checked = d.fork<Int> { throw IOException("io") }
            shouldThrow<CompletionException> { checked.join() }.cause.shouldBeInstanceOf<IOException>()
        }
    }

    test("cancel before it runs: the callable never runs; join and get throw CancellationException") {
        // No thread injection: t must stay queued behind the gated worker until it is cancelled.
        StealingDispatcher(1, "fj-cancel", StealingOptions(starvationInterval = Duration.ZERO)).use { d ->
            val gate = CountDownLatch(1)
            val ran = AtomicInteger()
            d.executor.execute { gate.await() }
            val t = d.fork { ran.incrementAndGet() }
            try {
                t.cancel(false) shouldBe true
                t.isCancelled shouldBe true
            } finally {
                gate.countDown() // a failed assertion must not leave close() waiting on the gated worker
            }
            shouldThrow<CancellationException> { t.join() }
            shouldThrow<CancellationException> { t.get() }
            d.executor.submit {}.get()
            ran.get() shouldBe 0
        }
    }

    test("get with timeout times out; a zero or negative timeout does not wait (Future.get, FutureTask)") {
        StealingDispatcher(1, "fj-timeout").use { d ->
            val gate = CountDownLatch(1)
            val t = d.fork { gate.await(); 1 }
            try {
                shouldThrow<TimeoutException> { t.get(10, TimeUnit.MILLISECONDS) }
                shouldThrow<TimeoutException> { t.get(-1, TimeUnit.MILLISECONDS) }
                shouldThrow<TimeoutException> { t.get(0, TimeUnit.MILLISECONDS) }
                shouldThrow<TimeoutException> { t.get(Long.MIN_VALUE, TimeUnit.DAYS) }
            } finally {
                gate.countDown() // a failed assertion must not leave close() waiting on the gated worker
            }
            t.get(10, TimeUnit.SECONDS) shouldBe 1
            t.get(-1, TimeUnit.MILLISECONDS) shouldBe 1 // done: the value, whatever the timeout
            t.get(0, TimeUnit.MILLISECONDS) shouldBe 1
        }
    }

    test("a null result is returned as null") {
        StealingDispatcher(1, "null").use { d -> d.fork<String?> { null }.join() shouldBe null }
    }

    test("fork is rejected once the pool takes no more work: from a worker of a stopping pool, from outside after shutdown") {
        val d = StealingDispatcher(2, "fj-reject")
        // Worker path (WorkStealingPool.fork): the pool stops while the forking task runs.
        val fromWorker = d.fork {
            d.executor.shutdownNow()
            runCatching { d.fork { 1 } }.exceptionOrNull()
        }.get(10, TimeUnit.SECONDS)
        fromWorker.shouldBeInstanceOf<RejectedExecutionException>().message shouldContain "fj-reject"
        d.executor.awaitTermination(10, TimeUnit.SECONDS) shouldBe true
        // Outside path (falls back to execute): nothing is queued, the caller is told.
        shouldThrow<RejectedExecutionException> { d.fork { 2 } }
    }

    test("the shared pool forks too") {
        StealingDispatcher.fork { 40 + 2 }.join() shouldBe 42
    }

    test("review: a fork/join chain deeper than maxInlineDepth completes on a pool of one") {
        for ((depth, bound) in listOf(300 to 256, 5 to 2)) {
            StealingDispatcher(1, "deep-join", StealingOptions(maxInlineDepth = bound)).use { d ->
                fun chain(k: Int): Int = if (k == 0) 0 else d.fork { chain(k - 1) }.join() + 1
                d.fork { chain(depth) }.get(30, TimeUnit.SECONDS) shouldBe depth
            }
        }
    }

    test("review: helping never runs an unrelated task that joins a frame below it on the same stack") {
        // A forks X (stolen by the other worker) and B = { A.join() + 1 }, then joins X. Helping
        // with A's own deque ran B on top of A, and B waited for A forever.
        StealingDispatcher(2, "help-ancestor").use { d ->
            val aRef = java.util.concurrent.atomic.AtomicReference<ForkedTask<Int>>()
            val aStarted = CountDownLatch(1)
            val xTaken = CountDownLatch(1)
            val a = d.fork {
                aStarted.await()
                val x = d.fork { xTaken.countDown(); Thread.sleep(200); 1 }
                xTaken.await(10, TimeUnit.SECONDS) // X is running on the other worker
                d.fork { aRef.get().join() + 1 } // B
                x.join()
            }
            aRef.set(a)
            aStarted.countDown()
            a.get(10, TimeUnit.SECONDS) shouldBe 1
        }
    }
})
