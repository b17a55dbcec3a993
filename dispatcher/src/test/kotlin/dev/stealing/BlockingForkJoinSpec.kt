package dev.stealing

import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.types.shouldBeSameInstanceAs
import java.io.IOException
import java.util.concurrent.Callable
import java.util.concurrent.CompletionException
import java.util.concurrent.CountDownLatch
import java.util.concurrent.RejectedExecutionException
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger
import java.util.concurrent.atomic.AtomicIntegerArray
import java.util.concurrent.atomic.AtomicReference
import java.util.function.BiFunction

/** The blocking fork/join, `pool.forkJoin(left, right, combine)` and `pool.forkJoin(left, right)`. */
class BlockingForkJoinSpec : FunSpec({
    fun fib(d: StealingDispatcher, n: Int): Int =
        if (n < 2) n else d.forkJoin(Callable { fib(d, n - 1) }, Callable { fib(d, n - 2) }, BiFunction { a: Int, b: Int -> a + b })

    fun await(latch: CountDownLatch) = check(latch.await(30, TimeUnit.SECONDS)) { "timed out waiting for a latch" }

    /** [await] that an interrupt does not end (shutdownNow interrupts the workers). */
    fun awaitUninterruptibly(latch: CountDownLatch) {
        val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30)
        while (latch.count > 0) {
            check(System.nanoTime() < deadline) { "timed out waiting for a latch" }
            try { latch.await(10, TimeUnit.MILLISECONDS) } catch (_: InterruptedException) { }
        }
    }

    test("fib on 1, 2 and 4 workers, called from outside the pool and from a worker; a pool of one never steals") {
        for (p in intArrayOf(1, 2, 4)) {
            StealingDispatcher(p, "bfj$p").use { d ->
                fib(d, 22) shouldBe 17711 // from outside: runs as a task of the pool while this thread waits
                d.executor.submit<Int> { fib(d, 22) }.join() shouldBe 17711 // on a worker
                val s = d.stats()
                s.forks shouldBe 2L * 28656 // a fork per inner node: fib(22) has 28,656, twice
                s.forks shouldBe s.forksInlined + s.forksStolen
                if (p == 1) s.forksStolen shouldBe 0
            }
        }
    }

    test("called on a worker of another pool, it runs on the pool it was called on") {
        StealingDispatcher(2, "bfj-a").use { a ->
            StealingDispatcher(2, "bfj-b").use { b ->
                a.executor.submit<Int> { fib(b, 18) }.join() shouldBe 2584
                b.stats().forks shouldBe 4180L // fib(18)'s inner nodes
                a.stats().forks shouldBe 0
            }
        }
    }

    test("every leaf of a tree runs exactly once, with halves stolen and taken back after tasks were pushed above them") {
        StealingDispatcher(4, "bfj-ledger").use { d ->
            repeat(20) { round ->
                val n = 1 shl 13
                val ledger = AtomicIntegerArray(n)
                val extra = AtomicInteger()
                val done = CountDownLatch(n / 64)
                fun leaves(lo: Int, hi: Int) {
                    if (hi - lo == 1) {
                        ledger.incrementAndGet(lo)
                        var x = lo.toLong()
                        repeat((lo * 31 + round) % 200) { x = x * 6364136223846793005L + 1 } // uneven work
                        if (x == 42L) println(x)
                        // A task pushed above the caller's right half: it must claim the half back by CAS.
                        if (lo % 64 == 0) d.executor.execute { extra.incrementAndGet(); done.countDown() }
                        return
                    }
                    val mid = (lo + hi) ushr 1
                    d.forkJoin({ leaves(lo, mid) }, { leaves(mid, hi) })
                }
                leaves(0, n)
                for (i in 0 until n) ledger.get(i) shouldBe 1
                await(done)
                extra.get() shouldBe n / 64
            }
            val s = d.stats()
            s.forks shouldBe s.forksInlined + s.forksStolen
        }
    }

    test("a failure of the left half is thrown and a right half taken back never runs") {
        StealingDispatcher(1, "bfj-left").use { d ->
            val rightRan = AtomicInteger()
            val boom = IllegalStateException("left")
            val e = shouldThrow<IllegalStateException> {
                d.fork {
                    d.forkJoin(Callable<Int> { throw boom }, Callable { rightRan.incrementAndGet() }, BiFunction { a: Int, b: Int -> a + b })
                }.join()
            }
            e shouldBeSameInstanceAs boom
            rightRan.get() shouldBe 0
        }
    }

    test("a failure of the right half is thrown; a checked exception is wrapped in CompletionException") {
        StealingDispatcher(2, "bfj-right").use { d ->
            val boom = IllegalArgumentException("right")
            shouldThrow<IllegalArgumentException> {
                d.forkJoin(Callable { 1 }, Callable<Int> { throw boom }, BiFunction { a: Int, b: Int -> a + b })
            } shouldBeSameInstanceAs boom
            val io = IOException("checked")
            val wrapped = shouldThrow<CompletionException> {
                d.fork { d.forkJoin(Callable { 1 }, Callable<Int> { throw io }, BiFunction { a: Int, b: Int -> a + b }) }.join()
            }
            wrapped.cause shouldBeSameInstanceAs io
        }
    }

    test("both halves fail, the right one stolen: the caller waits for it and throws the left failure with the right one suppressed") {
        StealingDispatcher(2, "bfj-both").use { d ->
            val rightStarted = CountDownLatch(1)
            val rightMayEnd = CountDownLatch(1)
            val rightEnded = AtomicInteger()
            val left = IllegalStateException("left")
            val right = IllegalArgumentException("right")
            val e = shouldThrow<IllegalStateException> {
                d.forkJoin(
                    Callable<Int> {
                        await(rightStarted) // the other worker stole the right half
                        rightMayEnd.countDown()
                        throw left
                    },
                    Callable<Int> {
                        rightStarted.countDown()
                        await(rightMayEnd)
                        Thread.sleep(20) // the left half has thrown by now, most likely: the caller must still wait
                        rightEnded.incrementAndGet()
                        throw right
                    },
                    BiFunction { a: Int, b: Int -> a + b },
                )
            }
            e shouldBeSameInstanceAs left
            rightEnded.get() shouldBe 1
            e.suppressed.toList() shouldBe listOf(right)
            d.stats().forksStolen shouldBe 1
        }
    }

    test("a stolen right half that forks again: the caller helps with its forks or waits, and gets the value") {
        StealingDispatcher(2, "bfj-help").use { d ->
            val stolen = CountDownLatch(1)
            val r = d.forkJoin(
                Callable { await(stolen); fib(d, 20) },
                Callable { stolen.countDown(); fib(d, 24) },
                BiFunction { a: Int, b: Int -> a + b },
            )
            r shouldBe 6765 + 46368
            (d.stats().forksStolen >= 1) shouldBe true // the latch made the other worker take the right half
        }
    }

    test("the Runnable form runs both halves; an outside caller's interrupt does not end the wait and stays set") {
        StealingDispatcher(2, "bfj-run").use { d ->
            val ran = AtomicInteger()
            d.forkJoin({ ran.incrementAndGet() }, { ran.incrementAndGet() })
            ran.get() shouldBe 2
            val entered = CountDownLatch(1)
            val release = CountDownLatch(1)
            val outcome = AtomicReference<String>()
            val caller = Thread {
                d.forkJoin({ entered.countDown(); await(release) }, { ran.incrementAndGet() })
                outcome.set("returned, interrupted=${Thread.currentThread().isInterrupted}")
            }
            caller.start()
            await(entered)
            caller.interrupt()
            release.countDown()
            caller.join(30_000)
            outcome.get() shouldBe "returned, interrupted=true"
        }
    }

    test("shutdownNow takes a right half off the deque while its left half runs: the caller runs it, nothing is handed back") {
        val d = StealingDispatcher(1, "bfj-stop")
        val leftRunning = CountDownLatch(1)
        val stopped = CountDownLatch(1)
        val result = d.executor.submit<Int> {
            d.forkJoin(Callable { leftRunning.countDown(); awaitUninterruptibly(stopped); 1 }, Callable { 2 }, BiFunction { a: Int, b: Int -> a + b })
        }
        await(leftRunning)
        val handedBack = d.executor.shutdownNow()
        stopped.countDown()
        handedBack shouldBe emptyList()
        result.get(30, TimeUnit.SECONDS) shouldBe 3
        d.executor.awaitTermination(30, TimeUnit.SECONDS) shouldBe true
    }

    test("after close, a call from outside is rejected; null arguments name the parameter") {
        val d = StealingDispatcher(1, "bfj-closed")
        d.close()
        shouldThrow<RejectedExecutionException> { d.forkJoin({}, {}) }
        StealingDispatcher(1, "bfj-nulls").use { p ->
            val nulls = JavaNulls.forkJoinMessages(p)
            nulls shouldBe listOf("left", "right", "combine", "left", "right").map { "Parameter specified as non-null is null: method dev.stealing.StealingDispatcher.forkJoin, parameter $it" }
        }
    }
})
