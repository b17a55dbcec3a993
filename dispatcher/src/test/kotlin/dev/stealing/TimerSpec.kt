package dev.stealing

import dev.stealing.internal.timer.TimerHeap
import dev.stealing.internal.worker.Worker
import dev.stealing.testsupport.eventually
import dev.stealing.testsupport.runInFreshJvm
import dev.stealing.testsupport.spin
import dev.stealing.testsupport.statsOf
import dev.stealing.testsupport.stressMultiplier
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.booleans.shouldBeTrue
import io.kotest.matchers.ints.shouldBeGreaterThan
import io.kotest.matchers.longs.shouldBeGreaterThan
import io.kotest.matchers.longs.shouldBeGreaterThanOrEqual
import io.kotest.matchers.longs.shouldBeLessThan
import io.kotest.matchers.shouldBe
import io.kotest.matchers.types.shouldBeInstanceOf
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.Delay
import kotlinx.coroutines.ExperimentalCoroutinesApi
import kotlinx.coroutines.InternalCoroutinesApi
import kotlinx.coroutines.Job
import kotlinx.coroutines.TimeoutCancellationException
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.delay
import kotlinx.coroutines.ensureActive
import kotlinx.coroutines.joinAll
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeout
import java.lang.management.ManagementFactory
import java.util.concurrent.CountDownLatch
import java.util.concurrent.ThreadLocalRandom
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger
import java.util.concurrent.atomic.AtomicIntegerArray
import kotlin.coroutines.coroutineContext

/** `delay` and `withTimeout` on the pool's own timers (kotlinx's `Delay`). */
@OptIn(InternalCoroutinesApi::class, ExperimentalCoroutinesApi::class)
class TimerSpec : FunSpec({
    test("every dispatcher of the pool is a Delay, and limitedParallelism views delegate to it") {
        StealingDispatcher(2, "delay-kinds").use { d ->
            d.shouldBeInstanceOf<Delay>()
            StealingDispatcher.Default.shouldBeInstanceOf<Delay>()
            d.affinity("k").shouldBeInstanceOf<Delay>()
            d.fairQueue("q").use { it.shouldBeInstanceOf<Delay>() }
            val view = d.limitedParallelism(1)
            val before = d.stats().timersFired
            runBlocking { withContext(view) { repeat(5) { delay(1) } } }
            // Five delays fired by the pool's workers, not by kotlinx's timer thread.
            (d.stats().timersFired - before) shouldBe 5L
        }
    }

    test("a delay never resumes early, resumes on a worker, and a coroutine's delays keep their order") {
        StealingDispatcher(2, "delay-order").use { d ->
            runBlocking {
                withContext(d) {
                    var last = System.nanoTime()
                    for (ms in listOf(5L, 1L, 20L, 0L, 3L, 10L)) {
                        val start = System.nanoTime()
                        delay(ms)
                        val now = System.nanoTime()
                        (now - start) shouldBeGreaterThanOrEqual TimeUnit.MILLISECONDS.toNanos(ms)
                        (now >= last).shouldBeTrue()
                        last = now
                        (Thread.currentThread() is Worker).shouldBeTrue()
                    }
                }
            }
            d.stats().pendingTimers.sum() shouldBe 0
        }
    }

    test("withTimeout: times out on time, and one that ends first leaves no timer behind") {
        StealingDispatcher(2, "timeout").use { d ->
            runBlocking {
                withContext(d) {
                    val start = System.nanoTime()
                    shouldThrow<TimeoutCancellationException> { withTimeout(50) { delay(60_000) } }
                    val took = System.nanoTime() - start
                    took shouldBeGreaterThanOrEqual TimeUnit.MILLISECONDS.toNanos(50)
                    took shouldBeLessThan TimeUnit.SECONDS.toNanos(5) // a loaded machine, not 60 s
                    repeat(10_000) { withTimeout(10_000) { it } }
                }
            }
            val s = d.stats()
            s.pendingTimers.sum() shouldBe 0
            s.timersCancelled shouldBeGreaterThanOrEqual 10_000L
        }
    }

    test("1M withTimeout calls that end early leave the heaps as small as they were") {
        StealingDispatcher(2, "timeout-memory").use { d ->
            runBlocking {
                List(2) {
                    launch(d) { repeat(500_000 * stressMultiplier) { i -> withTimeout(10_000) { i } } }
                }.joinAll()
            }
            d.stats().pendingTimers.sum() shouldBe 0
            d.pool.workers.forEach { w -> w.timers?.let { it.capacity() shouldBe TimerHeap.INITIAL_CAPACITY } }
        }
    }

    test("delays and timeouts from outside the pool fire on its workers") {
        StealingDispatcher(2, "outside").use { d ->
            val resumedOn = AtomicInteger()
            runBlocking {
                // UNDISPATCHED: the delay is scheduled on this (outside) thread.
                List(100) {
                    launch(d, CoroutineStart.UNDISPATCHED) {
                        delay(ThreadLocalRandom.current().nextLong(1, 5))
                        if (Thread.currentThread() is Worker) resumedOn.incrementAndGet()
                    }
                }.joinAll()
            }
            // Every timer fired on a worker. A coroutine whose 1 ms passed before it had suspended
            // (a preempted caller) goes on in its caller, as kotlinx allows; the others resume on
            // the worker that fired their timer.
            d.stats().timersFired shouldBeGreaterThanOrEqual 100L
            resumedOn.get() shouldBeGreaterThan 0
            d.stats().timersFromOutside shouldBeGreaterThanOrEqual 100L
        }
    }

    test("exactly once: 100,000 delays from workers and outside, cancelled at random, under steal races") {
        StealingDispatcher(2, "timer-ledger").use { d ->
            val n = 100_000 * stressMultiplier
            val resumed = AtomicIntegerArray(n)
            runBlocking {
                val jobs = ArrayList<Job>(n)
                for (i in 0 until n) {
                    val start = if (i % 4 == 0) CoroutineStart.UNDISPATCHED else CoroutineStart.DEFAULT
                    jobs += launch(d, start) {
                        delay(ThreadLocalRandom.current().nextLong(0, 3))
                        resumed.incrementAndGet(i)
                    }
                }
                for (i in 0 until n step 7) if (!jobs[i].isCompleted) jobs[i].cancel()
                jobs.joinAll()
                // Never twice; exactly once unless cancelled (a cancel may also come after it).
                for (i in 0 until n) {
                    val r = resumed.get(i)
                    if (r > 1 || (r == 0 && !jobs[i].isCancelled)) throw AssertionError("coroutine $i resumed $r times")
                }
            }
            d.stats().pendingTimers.sum() shouldBe 0
        }
    }

    test("a timer of a worker that then blocks fires while it blocks") {
        StealingDispatcher(1, "blocked-timer").use { d ->
            val fired = CountDownLatch(1)
            val firedWhileBlocked = runBlocking {
                withContext(d) {
                    // The timer goes into this worker's heap, then this worker blocks.
                    launch(start = CoroutineStart.UNDISPATCHED) {
                        delay(50)
                        fired.countDown()
                    }
                    blocking { fired.await(10, TimeUnit.SECONDS) }
                }
            }
            firedWhileBlocked.shouldBeTrue()
            d.stats().timersStolen shouldBeGreaterThan 0L
        }
    }

    test("a timer of a worker stuck in a long computation is taken over by another worker") {
        StealingDispatcher(2, "stuck-timer").use { d ->
            val fired = CountDownLatch(1)
            val firedWhileStuck = runBlocking {
                withContext(d) {
                    launch(start = CoroutineStart.UNDISPATCHED) {
                        delay(20)
                        fired.countDown()
                    }
                    // Spin on this worker (no suspension) until the timer has fired elsewhere.
                    val end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10)
                    while (fired.count > 0 && System.nanoTime() < end) Thread.onSpinWait()
                    fired.count == 0L
                }
            }
            firedWhileStuck.shouldBeTrue()
            d.stats().timersStolen shouldBeGreaterThan 0L
        }
    }

    test("withTimeout cancels a computation on time while every CPU is busy") {
        StealingDispatcher(2, "timeout-load").use { d ->
            val burning = java.util.concurrent.atomic.AtomicBoolean(true)
            // Every CPU busy: two threads outside the pool that never stop (until the end).
            val burners = List(2) { kotlin.concurrent.thread(isDaemon = true) { while (burning.get()) Thread.onSpinWait() } }
            runBlocking {
                val start = System.nanoTime()
                val timedOut: Long = async(d) {
                    try {
                        withTimeout(100) { while (true) coroutineContext.ensureActive() }
                        @Suppress("UNREACHABLE_CODE") 0L
                    } catch (e: TimeoutCancellationException) {
                        System.nanoTime() - start
                    }
                }.await()
                burning.set(false)
                burners.forEach { it.join() }
                timedOut shouldBeGreaterThanOrEqual TimeUnit.MILLISECONDS.toNanos(100)
                timedOut shouldBeLessThan TimeUnit.SECONDS.toNanos(5) // bounded: monitor hand-over
            }
        }
    }

    test("a delay on affinity(key) resumes on the key's worker") {
        StealingDispatcher(4, "affinity-delay").use { d ->
            runBlocking {
                List(8) { k ->
                    launch(d.affinity(k)) {
                        val t = Thread.currentThread()
                        repeat(20) {
                            delay(ThreadLocalRandom.current().nextLong(0, 3))
                            (Thread.currentThread() === t).shouldBeTrue()
                        }
                    }
                }.joinAll()
            }
        }
    }

    test("a delay on a fair queue resumes through that queue") {
        StealingDispatcher(2, "fair-delay").use { d ->
            d.fairQueue("q").use { q ->
                runBlocking {
                    withContext(q) {
                        val before = d.statsOf(q).executed
                        repeat(10) { delay(1) }
                        // Each resumption was a task of the queue.
                        (d.statsOf(q).executed - before) shouldBeGreaterThanOrEqual 10L
                    }
                }
            }
        }
    }

    test("limitedParallelism(1): delays never let two coroutines of the view run at once") {
        StealingDispatcher(4, "view-delay").use { d ->
            val view = d.limitedParallelism(1)
            val inside = AtomicInteger()
            val overlaps = AtomicInteger()
            runBlocking {
                List(20) {
                    launch(view) {
                        repeat(20) {
                            if (inside.incrementAndGet() != 1) overlaps.incrementAndGet()
                            spin(10_000)
                            inside.decrementAndGet()
                            delay(ThreadLocalRandom.current().nextLong(0, 2))
                        }
                    }
                }.joinAll()
            }
            overlaps.get() shouldBe 0
        }
    }

    test("an idle pool with 10,000 pending timers sleeps: its threads use under 1% of a core") {
        StealingDispatcher(2, "idle-timers").use { d ->
            val scope = kotlinx.coroutines.CoroutineScope(d)
            val jobs = List(10_000) { scope.launch { delay(600_000) } }
            eventually(5_000) { d.stats().pendingTimers.sum() == 10_000 }.shouldBeTrue()
            eventually(5_000) { d.stats().idleThreads == d.stats().threads }.shouldBeTrue()
            val mx = ManagementFactory.getThreadMXBean()
            val poolThreads = Thread.getAllStackTraces().keys.filter { it.name.startsWith("idle-timers-") }
            fun cpu() = poolThreads.sumOf { mx.getThreadCpuTime(it.id).coerceAtLeast(0) }
            val before = cpu()
            val window = 3_000L * stressMultiplier
            Thread.sleep(window) // the subject is what the pool does while nothing happens
            val used = cpu() - before
            used shouldBeLessThan TimeUnit.MILLISECONDS.toNanos(window) / 100
            jobs.forEach { it.cancel() }
            eventually(5_000) { d.stats().pendingTimers.sum() == 0 }.shouldBeTrue()
        }
    }

    test("review: a timer placed from outside on a blocked worker fires while the monitor sleeps") {
        val d = StealingDispatcher(2, "review-r1")
        val ex = d.executor
        ex.schedule(Runnable { }, 1, TimeUnit.MILLISECONDS).get(5, TimeUnit.SECONDS) // starts the core workers
        val entered = CountDownLatch(1)
        val release = CountDownLatch(1)
        val blocker = kotlinx.coroutines.CoroutineScope(d).launch { blocking { entered.countDown(); release.await() } }
        entered.await(10, TimeUnit.SECONDS).shouldBeTrue()
        val late = ArrayList<Int>()
        try {
            for (attempt in 0 until 2) { // round-robin placement: one of the two lands on the blocked worker
                Thread.sleep(400) // a few monitor intervals with no active worker: the monitor parks for good
                val f = ex.schedule(Runnable { }, 20, TimeUnit.MILLISECONDS)
                try {
                    f.get(5, TimeUnit.SECONDS)
                } catch (e: java.util.concurrent.TimeoutException) {
                    late += attempt
                }
            }
        } finally {
            release.countDown()
            runBlocking { blocker.join() }
            d.close()
        }
        late shouldBe emptyList()
    }

    test("the JVM never starts kotlinx's DefaultExecutor thread when every delay is on the pool") {
        runInFreshJvm(DelaysOnlyMain::class.java) shouldBe listOf("no DefaultExecutor")
    }
})

/** Run in a fresh JVM by [TimerSpec]: delays and timeouts on the pool, then a look at the threads. */
object DelaysOnlyMain {
    @JvmStatic
    fun main(args: Array<String>) {
        StealingDispatcher(2, "delays-only").use { d ->
            runBlocking {
                withContext(d) {
                    List(100) { async { delay(1); withTimeout(1_000) { delay(1) }; it } }.awaitAll()
                    try {
                        withTimeout(5) { delay(1_000) }
                    } catch (e: TimeoutCancellationException) { /* expected */ }
                }
            }
        }
        val names = Thread.getAllStackTraces().keys.map { it.name }
        println(if (names.any { it.contains("DefaultExecutor") }) "DefaultExecutor started: $names" else "no DefaultExecutor")
    }
}
