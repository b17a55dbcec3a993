package dev.stealing

import dev.stealing.internal.timer.TimerHeap
import dev.stealing.testsupport.eventually
import dev.stealing.testsupport.stressMultiplier
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.booleans.shouldBeFalse
import io.kotest.matchers.booleans.shouldBeTrue
import io.kotest.matchers.longs.shouldBeGreaterThan
import io.kotest.matchers.shouldBe
import java.time.Duration
import java.util.concurrent.Callable
import java.util.concurrent.CancellationException
import java.util.concurrent.CountDownLatch
import java.util.concurrent.RejectedExecutionException
import java.util.concurrent.ScheduledFuture
import java.util.concurrent.ScheduledThreadPoolExecutor
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger
import java.util.concurrent.atomic.AtomicLong

/**
 * The executor's delayed and periodic tasks at shutdown, as ScheduledThreadPoolExecutor does
 * it: one-shot tasks still run and periodic ones stop, shutdownNow hands back what is pending
 * (uncancelled), and a shutdown racing a periodic task's re-add still terminates.
 */
class ScheduledShutdownSpec : FunSpec({
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
