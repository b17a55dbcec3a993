package dev.stealing

import dev.stealing.internal.idle.ParkState
import dev.stealing.internal.timer.Timer
import dev.stealing.internal.timer.TimerHeap
import dev.stealing.testsupport.eventually
import dev.stealing.testsupport.spin
import dev.stealing.testsupport.stressMultiplier
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.booleans.shouldBeFalse
import io.kotest.matchers.booleans.shouldBeTrue
import io.kotest.matchers.ints.shouldBeGreaterThanOrEqual
import io.kotest.matchers.longs.shouldBeGreaterThan
import io.kotest.matchers.longs.shouldBeGreaterThanOrEqual
import io.kotest.matchers.longs.shouldBeLessThanOrEqual
import io.kotest.matchers.shouldBe
import io.kotest.matchers.types.shouldBeInstanceOf
import java.time.Duration
import java.util.concurrent.Callable
import java.util.concurrent.CancellationException
import java.util.concurrent.CountDownLatch
import java.util.concurrent.ExecutionException
import java.util.concurrent.RejectedExecutionException
import java.util.concurrent.ScheduledFuture
import java.util.concurrent.ScheduledThreadPoolExecutor
import java.util.concurrent.ThreadLocalRandom
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger
import java.util.concurrent.atomic.AtomicIntegerArray
import java.util.concurrent.atomic.AtomicLong

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

    test("shutdown: one-shot delayed tasks still run at their time and termination waits for them; periodic ones stop") {
        val d = StealingDispatcher(2, "sched-shutdown")
        val ex = d.executor
        val ran = AtomicLong()
        val oneShot = ex.schedule(Runnable { ran.set(System.nanoTime()) }, 100, TimeUnit.MILLISECONDS)
        val periodic = ex.scheduleAtFixedRate({ }, 1, 1, TimeUnit.HOURS)
        val shutAt = System.nanoTime()
        ex.shutdown()
        periodic.isCancelled.shouldBeTrue()
        shouldThrow<RejectedExecutionException> { ex.schedule(Runnable { }, 1, TimeUnit.MILLISECONDS) }
        ex.isTerminated shouldBe false
        ex.awaitTermination(10, TimeUnit.SECONDS).shouldBeTrue()
        oneShot.isDone.shouldBeTrue()
        oneShot.isCancelled shouldBe false
        (ran.get() - shutAt) shouldBeGreaterThan 0L
    }

    test("shutdownNow hands back the delayed tasks, uncancelled (as ScheduledThreadPoolExecutor)") {
        val d = StealingDispatcher(2, "sched-now-stop")
        val ex = d.executor
        val ran = AtomicInteger()
        val futures = List(100) { ex.schedule(Runnable { ran.incrementAndGet() }, 1, TimeUnit.HOURS) }
        val periodic = ex.scheduleWithFixedDelay({ ran.incrementAndGet() }, 1, 1, TimeUnit.HOURS)
        val handedBack = ex.shutdownNow()
        handedBack.size shouldBe 101
        handedBack.toSet() shouldBe (futures + periodic).toSet()
        (futures + periodic).forEach {
            it.isCancelled.shouldBeFalse()
            it.isDone.shouldBeFalse()
        }
        ex.awaitTermination(10, TimeUnit.SECONDS).shouldBeTrue()
        ran.get() shouldBe 0
    }

    /** Nine tasks 9 s away, three of each kind, as the contract tests schedule them. */
    fun scheduleNine(ex: java.util.concurrent.ScheduledExecutorService): List<ScheduledFuture<*>> = List(3) {
        listOf(
            ex.schedule(Callable { it }, 9, TimeUnit.SECONDS),
            ex.scheduleAtFixedRate({ }, 9, 1, TimeUnit.SECONDS),
            ex.scheduleWithFixedDelay({ }, 9, 1, TimeUnit.SECONDS),
        )
    }.flatten()

    test("shutdownNow hands back every pending timer task while the worker exits at that moment (deterministic)") {
        // The worker leaves a task right after the pool moved to STOP, and exits before
        // shutdownNow() takes the heaps. Before the fix it took its own heap's timers and
        // cancelled them: shutdownNow() returned 0 of 9.
        val d = StealingDispatcher(1, "sched-exit-race", StealingOptions(starvationInterval = Duration.ZERO))
        val ex = d.executor
        val release = CountDownLatch(1)
        val inTask = CountDownLatch(1)
        val worker = java.util.concurrent.CompletableFuture<Thread>()
        ex.execute {
            worker.complete(Thread.currentThread())
            inTask.countDown()
            while (true) {
                try {
                    release.await()
                    break
                } catch (e: InterruptedException) { /* keep waiting for the test */ }
            }
        }
        inTask.await(10, TimeUnit.SECONDS).shouldBeTrue()
        val futures = scheduleNine(ex)
        val w = worker.get(10, TimeUnit.SECONDS)
        d.pool.lifecycle.afterStopState = Runnable {
            release.countDown()
            // The worker has exited, or waits for shutdownNow() to take the queues first (the fix).
            eventually(10_000) {
                w.state == Thread.State.TERMINATED || w.stackTrace.any { it.methodName.startsWith("awaitStopHandBack") }
            }.shouldBeTrue()
        }
        val handedBack = ex.shutdownNow()
        ex.awaitTermination(10, TimeUnit.SECONDS).shouldBeTrue()
        handedBack.toSet() shouldBe futures.toSet()
        futures.count { it.isCancelled } shouldBe 0
    }

    test("shutdownNow on fresh pools hands back all nine pending tasks every time, as ScheduledThreadPoolExecutor") {
        val rounds = 300 * stressMultiplier
        var short = 0
        var cancelled = 0
        repeat(rounds) { round ->
            val d = StealingDispatcher(1, "sched-fresh-$round")
            val futures = scheduleNine(d.executor)
            val handedBack = d.executor.shutdownNow()
            if (handedBack.toSet() != futures.toSet()) short++
            cancelled += futures.count { it.isCancelled }
            d.executor.awaitTermination(10, TimeUnit.SECONDS).shouldBeTrue()
        }
        val stpe = ScheduledThreadPoolExecutor(1)
        val stpeFutures = scheduleNine(stpe)
        stpe.shutdownNow().toSet() shouldBe stpeFutures.toSet()
        stpeFutures.count { it.isCancelled } shouldBe 0
        short shouldBe 0
        cancelled shouldBe 0
    }

    test("running handed-back tasks runs them: a delayed Callable's future holds its value; a periodic task runs once, then is cancelled") {
        val d = StealingDispatcher(1, "sched-run-handed-back")
        val ticks = AtomicInteger()
        val callable = d.executor.schedule(Callable { "value" }, 1, TimeUnit.HOURS)
        val runnable = d.executor.schedule(Runnable { ticks.incrementAndGet() }, 1, TimeUnit.HOURS)
        val periodic = d.executor.scheduleAtFixedRate({ ticks.incrementAndGet() }, 1, 1, TimeUnit.HOURS)
        val handedBack = d.executor.shutdownNow()
        d.executor.awaitTermination(10, TimeUnit.SECONDS).shouldBeTrue()
        handedBack.size shouldBe 3
        handedBack.forEach { it.run() } // the caller runs them elsewhere
        callable.get(1, TimeUnit.SECONDS) shouldBe "value"
        runnable.isDone.shouldBeTrue()
        runnable.isCancelled.shouldBeFalse()
        ticks.get() shouldBe 2
        periodic.isCancelled.shouldBeTrue()
        d.pool.timers.periodicTasks.size shouldBe 0
    }

    test("shutdown cancels periodic tasks whose first run is already due, wherever they are queued, as ScheduledThreadPoolExecutor") {
        // The only worker is busy. Before the fix a periodic task due at once went to the global
        // queue (or the worker's deque) and shutdown() did not see it: neither cancelled nor done.
        // No thread injection, as in ScheduledThreadPoolExecutor(1): an extra thread could be running
        // one of them at shutdown(), which then lets that run end before it is cancelled.
        for (stpe in listOf(false, true)) {
            val d = if (stpe) null else StealingDispatcher(1, "sched-due-periodic", StealingOptions(starvationInterval = Duration.ZERO))
            val ex: java.util.concurrent.ScheduledExecutorService = d?.executor ?: ScheduledThreadPoolExecutor(1)
            val release = CountDownLatch(1)
            val fromInside = java.util.concurrent.CompletableFuture<ScheduledFuture<*>>()
            val oneShotRan = CountDownLatch(1)
            ex.execute {
                fromInside.complete(ex.scheduleAtFixedRate({ }, 0, 1, TimeUnit.MILLISECONDS))
                release.await(30, TimeUnit.SECONDS)
            }
            val periodic = listOf(
                fromInside.get(10, TimeUnit.SECONDS),
                ex.scheduleAtFixedRate({ }, 0, 1, TimeUnit.MILLISECONDS),
                ex.scheduleWithFixedDelay({ }, 0, 1, TimeUnit.MILLISECONDS),
                ex.scheduleAtFixedRate({ }, -5, 1, TimeUnit.MILLISECONDS),
                ex.scheduleWithFixedDelay({ }, 1, 1, TimeUnit.MILLISECONDS),
            )
            val oneShot = ex.schedule(Runnable { oneShotRan.countDown() }, 0, TimeUnit.MILLISECONDS)
            ex.shutdown()
            periodic.forEachIndexed { i, f ->
                withClue("${if (stpe) "STPE" else "pool"} periodic task $i") {
                    f.isCancelled.shouldBeTrue()
                    f.isDone.shouldBeTrue()
                    shouldThrow<CancellationException> { f.get(1, TimeUnit.SECONDS) }
                }
            }
            oneShot.isCancelled.shouldBeFalse() // a one-shot delayed task keeps running
            release.countDown()
            oneShotRan.await(10, TimeUnit.SECONDS).shouldBeTrue()
            ex.awaitTermination(10, TimeUnit.SECONDS).shouldBeTrue()
            if (d != null) d.pool.timers.periodicTasks.size shouldBe 0
        }
    }

    test("after shutdown a task of the pool cannot schedule even with a zero delay (as ScheduledThreadPoolExecutor)") {
        val d = StealingDispatcher(1, "sched-zero-after-shutdown")
        val go = CountDownLatch(1)
        val outcome = d.executor.submit(Callable {
            go.await()
            listOf(0L, -1L).map { delay ->
                try {
                    d.executor.scheduleAtFixedRate({ }, delay, 1, TimeUnit.MILLISECONDS)
                    "accepted"
                } catch (e: RejectedExecutionException) {
                    "rejected"
                }
            }
        })
        d.executor.shutdown()
        go.countDown()
        outcome.get(10, TimeUnit.SECONDS) shouldBe listOf("rejected", "rejected")
        d.executor.awaitTermination(10, TimeUnit.SECONDS).shouldBeTrue()
        d.pool.timers.periodicTasks.size shouldBe 0
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

    /** The private lock of worker 0's timer heap, held by a test to freeze a re-add in place. */
    fun heapLock(d: StealingDispatcher): java.util.concurrent.locks.ReentrantLock {
        val heap = d.pool.workers.getOrNull(0)!!.timers!!
        val f = TimerHeap::class.java.getDeclaredField("lock")
        f.isAccessible = true
        return f.get(heap) as java.util.concurrent.locks.ReentrantLock
    }

    test("review: a periodic task cancelled between its run and its re-add does not stay in the heap") {
        StealingDispatcher(1, "review-r4").use { d ->
            val ran = CountDownLatch(1)
            val go = CountDownLatch(1)
            val f = d.executor.scheduleAtFixedRate({ ran.countDown(); go.await() }, 20, 3_600_000, TimeUnit.MILLISECONDS)
            ran.await(10, TimeUnit.SECONDS).shouldBeTrue()
            val lock = heapLock(d)
            lock.lock()
            try {
                go.countDown()
                eventually(5_000) { lock.hasQueuedThreads() }.shouldBeTrue() // the worker waits in add()
                f.cancel(false).shouldBeTrue()
            } finally {
                lock.unlock()
            }
            eventually(5_000) { d.stats().pendingTimers.sum() == 0 }.shouldBeTrue()
        }
    }

    test("review: shutdown between a periodic task's run and its re-add: the pool still terminates") {
        val d = StealingDispatcher(1, "review-r5")
        val ran = CountDownLatch(1)
        val go = CountDownLatch(1)
        d.executor.scheduleAtFixedRate({ ran.countDown(); go.await() }, 20, 3_600_000, TimeUnit.MILLISECONDS)
        ran.await(10, TimeUnit.SECONDS).shouldBeTrue()
        val lock = heapLock(d)
        lock.lock()
        try {
            go.countDown()
            eventually(5_000) { lock.hasQueuedThreads() }.shouldBeTrue()
            d.executor.shutdown() // stops the periodic tasks it finds: this one is in no heap yet
        } finally {
            lock.unlock()
        }
        val terminated = d.executor.awaitTermination(10, TimeUnit.SECONDS)
        d.executor.shutdownNow()
        terminated.shouldBeTrue()
    }

    test("review: shutdownNow between a periodic task's run and its re-add hands it back uncancelled") {
        // The worker re-adds the task to its heap just before shutdownNow() takes the heap. Before
        // the fix the worker then saw the pool shut down and cancelled the task it had just
        // handed back.
        val d = StealingDispatcher(1, "review-handback-readd", StealingOptions(starvationInterval = Duration.ZERO))
        val ran = CountDownLatch(1)
        val go = CountDownLatch(1)
        val worker = java.util.concurrent.CompletableFuture<Thread>()
        val f = d.executor.scheduleAtFixedRate({
            worker.complete(Thread.currentThread())
            ran.countDown()
            go.await()
        }, 20, 3_600_000, TimeUnit.MILLISECONDS)
        ran.await(10, TimeUnit.SECONDS).shouldBeTrue()
        val w = worker.get(10, TimeUnit.SECONDS)
        val lock = heapLock(d)
        var handedBack: List<Runnable> = emptyList()
        lock.lock()
        val stopper: Thread
        try {
            go.countDown()
            eventually(5_000) { lock.hasQueuedThread(w) }.shouldBeTrue() // the worker waits to re-add
            stopper = kotlin.concurrent.thread { handedBack = d.executor.shutdownNow() }
            eventually(5_000) { lock.hasQueuedThread(stopper) }.shouldBeTrue() // shutdownNow() waits to take the heap
        } finally {
            lock.unlock() // the worker, queued first, re-adds; then shutdownNow() takes it
        }
        stopper.join(10_000)
        d.executor.awaitTermination(10, TimeUnit.SECONDS).shouldBeTrue()
        handedBack shouldBe listOf(f)
        f.isCancelled.shouldBeFalse()
    }

    test("shutdownNow after shutdown does not hand back the periodic tasks shutdown cancelled (as ScheduledThreadPoolExecutor)") {
        val d = StealingDispatcher(1, "sched-shutdown-then-now")
        val release = CountDownLatch(1)
        val busy = CountDownLatch(1)
        d.executor.execute {
            busy.countDown()
            release.await(30, TimeUnit.SECONDS)
        }
        busy.await(10, TimeUnit.SECONDS).shouldBeTrue()
        val due = d.executor.scheduleAtFixedRate({ }, 0, 1, TimeUnit.MILLISECONDS) // queued as due behind the busy worker
        val oneShot = d.executor.schedule(Runnable { }, 1, TimeUnit.HOURS)
        d.executor.shutdown()
        due.isCancelled.shouldBeTrue()
        val handedBack = d.executor.shutdownNow()
        release.countDown()
        handedBack shouldBe listOf(oneShot)
        d.executor.awaitTermination(10, TimeUnit.SECONDS).shouldBeTrue()
    }

    test("after shutdown a task of the pool cannot schedule either (as ScheduledThreadPoolExecutor)") {
        val d = StealingDispatcher(1, "sched-after-shutdown")
        val go = CountDownLatch(1)
        val outcome = d.executor.submit(Callable {
            go.await()
            try {
                d.executor.schedule(Runnable { }, 1, TimeUnit.MILLISECONDS)
                "accepted"
            } catch (e: RejectedExecutionException) {
                "rejected"
            }
        })
        d.executor.shutdown()
        go.countDown()
        outcome.get(10, TimeUnit.SECONDS) shouldBe "rejected"
        d.executor.awaitTermination(10, TimeUnit.SECONDS).shouldBeTrue()
    }
})
