package dev.stealing

import dev.stealing.internal.idle.ParkState
import dev.stealing.internal.timer.Timer
import dev.stealing.testsupport.eventually
import dev.stealing.testsupport.spin
import dev.stealing.testsupport.stressMultiplier
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.booleans.shouldBeFalse
import io.kotest.matchers.booleans.shouldBeTrue
import io.kotest.matchers.ints.shouldBeGreaterThanOrEqual
import io.kotest.matchers.longs.shouldBeGreaterThan
import io.kotest.matchers.longs.shouldBeGreaterThanOrEqual
import io.kotest.matchers.longs.shouldBeLessThanOrEqual
import io.kotest.matchers.shouldBe
import io.kotest.matchers.types.shouldBeInstanceOf
import java.util.concurrent.Callable
import java.util.concurrent.CancellationException
import java.util.concurrent.CountDownLatch
import java.util.concurrent.ExecutionException
import java.util.concurrent.ScheduledFuture
import java.util.concurrent.ScheduledThreadPoolExecutor
import java.util.concurrent.ThreadLocalRandom
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger
import java.util.concurrent.atomic.AtomicIntegerArray

/**
 * The executor as a `ScheduledExecutorService`: the cases of its javadoc, checked against what
 * `ScheduledThreadPoolExecutor` does in the same case where the two could differ.
 */
class ScheduledExecutorSpec : FunSpec({
    test("schedule: a Callable's value, a Runnable's null, on a worker, not before the delay") {
        StealingDispatcher(2, "sched").use { d ->
            val ex = d.executor
            val start = System.nanoTime()
            val f: ScheduledFuture<String> = ex.schedule(Callable { Thread.currentThread().name }, 30, TimeUnit.MILLISECONDS)
            f.get(10, TimeUnit.SECONDS).startsWith("sched-worker-").shouldBeTrue()
            (System.nanoTime() - start) shouldBeGreaterThanOrEqual TimeUnit.MILLISECONDS.toNanos(30)
            f.isDone.shouldBeTrue()
            (f as java.util.concurrent.RunnableScheduledFuture<*>).isPeriodic shouldBe false
            val r = ex.schedule(Runnable { }, 1, TimeUnit.MILLISECONDS)
            r.get(10, TimeUnit.SECONDS) shouldBe null
        }
    }

    test("zero and negative delays mean now") {
        StealingDispatcher(2, "sched-now").use { d ->
            d.executor.schedule(Callable { 1 }, 0, TimeUnit.SECONDS).get(10, TimeUnit.SECONDS) shouldBe 1
            d.executor.schedule(Callable { 2 }, -5, TimeUnit.DAYS).get(10, TimeUnit.SECONDS) shouldBe 2
            d.executor.scheduleAtFixedRate({ }, -1, 1, TimeUnit.HOURS).cancel(false).shouldBeTrue()
        }
    }

    test("getDelay counts down, compareTo orders by deadline") {
        StealingDispatcher(1, "sched-delay").use { d ->
            val later = d.executor.schedule(Runnable { }, 2, TimeUnit.HOURS)
            val sooner = d.executor.schedule(Runnable { }, 1, TimeUnit.HOURS)
            later.getDelay(TimeUnit.MINUTES) shouldBeGreaterThan 100L
            later.getDelay(TimeUnit.MINUTES) shouldBeLessThanOrEqual 120L
            (sooner < later).shouldBeTrue()
            (later.compareTo(later)) shouldBe 0
            val done = d.executor.schedule(Runnable { }, 1, TimeUnit.MILLISECONDS)
            done.get(10, TimeUnit.SECONDS)
            done.getDelay(TimeUnit.NANOSECONDS) shouldBeLessThanOrEqual 0L
            later.cancel(false); sooner.cancel(false)
        }
    }

    test("cancel removes the task at once: 10,000 cancelled delayed tasks leave nothing pending") {
        StealingDispatcher(2, "sched-cancel").use { d ->
            val ran = AtomicInteger()
            val futures = List(10_000) { d.executor.schedule(Runnable { ran.incrementAndGet() }, 1, TimeUnit.HOURS) }
            d.stats().pendingTimers.sum() shouldBe 10_000
            futures.forEach { it.cancel(false).shouldBeTrue() }
            d.stats().pendingTimers.sum() shouldBe 0
            d.stats().timersCancelled shouldBeGreaterThanOrEqual 10_000L
            futures.forEach {
                it.isCancelled.shouldBeTrue()
                shouldThrow<CancellationException> { it.get() }
                it.cancel(false).shouldBeFalse() // a second cancel does nothing, as FutureTask
            }
            ran.get() shouldBe 0
        }
    }

    test("an outside timer due before the one an idle worker sleeps until wakes it") {
        StealingDispatcher(1, "offer-wake").use { d ->
            val ex = d.executor
            ex.schedule(Runnable { }, 0, TimeUnit.MILLISECONDS).get(10, TimeUnit.SECONDS) // starts the worker
            val far = ex.schedule(Runnable { }, 1, TimeUnit.HOURS)
            val later = List(100) { ex.schedule(Runnable { }, 2, TimeUnit.HOURS) } // later: no reason to wake it
            try {
                val worker = d.pool.workers.getOrNull(0)!!
                // Parked until the far timer: it took its offers in and published that deadline.
                eventually(10_000) {
                    worker.idleNode.parkState() == ParkState.IDLE && worker.timers!!.ownerParkDeadline == (far as Timer).deadline
                }.shouldBeTrue()
                val ran = CountDownLatch(1)
                ex.schedule(Runnable { ran.countDown() }, 10, TimeUnit.MILLISECONDS)
                ran.await(10, TimeUnit.SECONDS).shouldBeTrue() // without the unpark it would sleep for an hour
            } finally {
                far.cancel(false) // close() would wait for them
                later.forEach { it.cancel(false) }
            }
        }
    }

    test("a timer offered to a busy worker and cancelled before it is taken in is counted once and never fires") {
        StealingDispatcher(1, "offer-cancel").use { d ->
            val entered = CountDownLatch(1)
            val release = CountDownLatch(1)
            d.executor.execute { entered.countDown(); release.await(30, TimeUnit.SECONDS) }
            entered.await(10, TimeUnit.SECONDS).shouldBeTrue()
            val ran = AtomicInteger()
            val cancelledBefore = d.stats().timersCancelled
            val futures = List(1_000) { d.executor.schedule(Runnable { ran.incrementAndGet() }, 20, TimeUnit.MILLISECONDS) }
            futures.forEach { it.cancel(false).shouldBeTrue() }
            d.stats().pendingTimers.sum() shouldBe 0
            (d.stats().timersCancelled - cancelledBefore) shouldBe 1_000L
            release.countDown()
            d.executor.schedule(Runnable { }, 50, TimeUnit.MILLISECONDS).get(10, TimeUnit.SECONDS) // after their deadline
            ran.get() shouldBe 0
            d.stats().timersFired shouldBe 1L // the marker: the cancelled ones were dropped, not fired
        }
    }

    test("scheduleAtFixedRate runs until cancelled; runs never overlap") {
        StealingDispatcher(4, "sched-rate").use { d ->
            val runs = AtomicInteger()
            val inside = AtomicInteger()
            val overlaps = AtomicInteger()
            val three = CountDownLatch(3)
            val f = d.executor.scheduleAtFixedRate({
                if (inside.incrementAndGet() != 1) overlaps.incrementAndGet()
                spin(2_000_000) // longer than the period: the next run waits for this one
                inside.decrementAndGet()
                runs.incrementAndGet()
                three.countDown()
            }, 0, 1, TimeUnit.MILLISECONDS)
            three.await(10, TimeUnit.SECONDS).shouldBeTrue()
            (f as java.util.concurrent.RunnableScheduledFuture<*>).isPeriodic shouldBe true
            f.cancel(false).shouldBeTrue()
            f.isDone.shouldBeTrue()
            shouldThrow<CancellationException> { f.get() }
            eventually(5_000) { inside.get() == 0 }.shouldBeTrue()
            val after = runs.get()
            // Nothing runs after the cancel (a run in progress at the cancel may still end).
            d.executor.schedule(Runnable { }, 20, TimeUnit.MILLISECONDS).get(10, TimeUnit.SECONDS)
            runs.get() shouldBe after
            overlaps.get() shouldBe 0
            d.stats().pendingTimers.sum() shouldBe 0
        }
    }

    test("scheduleWithFixedDelay waits the delay after each run's end") {
        StealingDispatcher(2, "sched-delay-fixed").use { d ->
            val ends = java.util.Collections.synchronizedList(ArrayList<Long>())
            val starts = java.util.Collections.synchronizedList(ArrayList<Long>())
            val four = CountDownLatch(4)
            val f = d.executor.scheduleWithFixedDelay({
                starts += System.nanoTime()
                spin(1_000_000)
                ends += System.nanoTime()
                four.countDown()
            }, 0, 5, TimeUnit.MILLISECONDS)
            four.await(10, TimeUnit.SECONDS).shouldBeTrue()
            f.cancel(false)
            for (i in 1 until 4) (starts[i] - ends[i - 1]) shouldBeGreaterThanOrEqual TimeUnit.MILLISECONDS.toNanos(5)
        }
    }

    test("a periodic task that throws runs no more, and its future holds the exception") {
        for (fixedRate in listOf(true, false)) {
            StealingDispatcher(2, "sched-throw").use { d ->
                val runs = AtomicInteger()
                val task = Runnable { if (runs.incrementAndGet() == 3) throw IllegalStateException("third run") }
                val f = if (fixedRate) d.executor.scheduleAtFixedRate(task, 0, 1, TimeUnit.MILLISECONDS)
                else d.executor.scheduleWithFixedDelay(task, 0, 1, TimeUnit.MILLISECONDS)
                val e = shouldThrow<ExecutionException> { f.get(10, TimeUnit.SECONDS) }
                e.cause.shouldBeInstanceOf<IllegalStateException>()
                d.executor.schedule(Runnable { }, 20, TimeUnit.MILLISECONDS).get(10, TimeUnit.SECONDS)
                runs.get() shouldBe 3
                f.isCancelled shouldBe false
                d.stats().pendingTimers.sum() shouldBe 0
            }
        }
    }

    test("bad arguments: a zero or negative period, null task or unit") {
        StealingDispatcher(1, "sched-args").use { d ->
            val ex = d.executor
            shouldThrow<IllegalArgumentException> { ex.scheduleAtFixedRate({ }, 0, 0, TimeUnit.SECONDS) }.message!!.contains("period")
            shouldThrow<IllegalArgumentException> { ex.scheduleWithFixedDelay({ }, 0, -1, TimeUnit.SECONDS) }.message!!.contains("delay")
            // The same as ScheduledThreadPoolExecutor:
            val stpe = ScheduledThreadPoolExecutor(1)
            shouldThrow<IllegalArgumentException> { stpe.scheduleAtFixedRate({ }, 0, 0, TimeUnit.SECONDS) }
            stpe.shutdown()
            JavaNulls.scheduleNullTask(ex).shouldBeTrue()
        }
    }

    test("exactly once: 200,000 delayed tasks from several threads and from workers, some cancelled") {
        StealingDispatcher(2, "sched-ledger").use { d ->
            val n = 200_000 * stressMultiplier
            val ran = AtomicIntegerArray(n)
            val futures = arrayOfNulls<ScheduledFuture<*>>(n)
            val producers = List(3) { p ->
                kotlin.concurrent.thread {
                    for (i in p until n step 4) {
                        futures[i] = d.executor.schedule(Runnable { ran.incrementAndGet(i) }, ThreadLocalRandom.current().nextLong(0, 3_000), TimeUnit.MICROSECONDS)
                    }
                }
            }
            // A quarter scheduled from inside the pool.
            d.executor.submit {
                for (i in 3 until n step 4) {
                    futures[i] = d.executor.schedule(Runnable { ran.incrementAndGet(i) }, ThreadLocalRandom.current().nextLong(0, 3_000), TimeUnit.MICROSECONDS)
                }
            }.get(60, TimeUnit.SECONDS)
            producers.forEach { it.join() }
            for (i in 0 until n step 5) futures[i]!!.cancel(false)
            for (i in 0 until n) {
                val f = futures[i]!!
                try {
                    f.get(30, TimeUnit.SECONDS)
                } catch (e: CancellationException) { /* cancelled in time */ }
                val r = ran.get(i)
                // A cancel that comes while the task runs succeeds too (FutureTask): r == 1 and cancelled.
                if (r > 1 || (r == 0 && !f.isCancelled)) {
                    throw AssertionError("task $i ran $r times, cancelled=${f.isCancelled}")
                }
            }
            eventually(5_000) { d.stats().pendingTimers.sum() == 0 }.shouldBeTrue()
            d.stats().timersFromOutside shouldBeGreaterThanOrEqual 1L
        }
    }
})
