package dev.stealing

import dev.stealing.internal.pool.FairQueue
import dev.stealing.internal.queue.MpmcTaskQueue
import dev.stealing.testsupport.eventually
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.launch
import java.time.Duration
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.CountDownLatch
import java.util.concurrent.CyclicBarrier
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicBoolean
import java.util.concurrent.atomic.AtomicInteger

class FailureSpec : FunSpec({
    test("a pool that cannot start any worker rejects what it accepted instead of stranding it") {
        val handled = java.util.concurrent.ConcurrentLinkedQueue<Pair<Runnable, Throwable>>()
        val d = StealingDispatcher(2, "no-threads", StealingOptions(exceptionHandler = { t, e -> handled += t to e }))
        val refuse = AtomicBoolean(true)
        val starter = d.pool.threads.threadStarter
        d.pool.threads.threadStarter = java.util.function.Consumer { t ->
            if (refuse.get()) throw OutOfMemoryError("unable to create native thread (test)") else starter.accept(t)
        }
        try {
            val plain = Runnable { error("must not run") }
            d.executor.execute(plain) // accepted: the queue took it; then the worker start fails
            val forked = d.fork { 42 }
            val job = kotlinx.coroutines.CoroutineScope(kotlinx.coroutines.Job()).launch(d) { error("must not run") }
            val fairTask = Runnable { error("must not run") }
            d.fairQueue("stranded").executor.execute(fairTask)
            // Each was rejected: the Runnable to the handler, the fork cancelled, the coroutine cancelled.
            eventually(10_000) { handled.any { it.first === plain } } shouldBe true
            handled.first { it.first === plain }.second.let {
                (it is java.util.concurrent.RejectedExecutionException) shouldBe true
                (it.cause is OutOfMemoryError) shouldBe true
            }
            eventually(10_000) { handled.any { it.first === fairTask } } shouldBe true
            forked.isCancelled shouldBe true
            kotlinx.coroutines.runBlocking { kotlinx.coroutines.withTimeout(10_000) { job.join() } }
            job.isCancelled shouldBe true
            d.stats().globalQueueDepth shouldBe 0
            // Once threads can be started again, the pool works.
            refuse.set(false)
            d.executor.submit<Int> { 7 }.get(10, TimeUnit.SECONDS) shouldBe 7
        } finally {
            refuse.set(false)
            d.close()
        }
    }


    test("a storm of throwing tasks leaves every worker alive and reaches the handler") {
        val n = 50_000
        val failures = AtomicInteger()
        val handled = CountDownLatch(n / 2)
        val handler = TaskExceptionHandler { _, e ->
            if (e is IllegalStateException) {
                failures.incrementAndGet()
                handled.countDown()
            }
        }
        val parallelism = 4
        // No thread injection: the barrier must find the core workers themselves, and no extra
        // thread may be started while some of them wait at it with storm tasks still queued.
        val options = StealingOptions(exceptionHandler = handler, starvationInterval = Duration.ZERO)
        StealingDispatcher(parallelism, "storm", options).use { d ->
            repeat(n) { i -> d.executor.execute { if (i % 2 == 0) throw IllegalStateException("boom $i") } }
            // Every worker must still be there: a barrier that needs all of them at once.
            val barrier = CyclicBarrier(parallelism)
            val threads = ConcurrentHashMap.newKeySet<Thread>()
            val done = CountDownLatch(parallelism)
            repeat(parallelism) {
                d.executor.execute {
                    threads += Thread.currentThread()
                    barrier.await(30, TimeUnit.SECONDS)
                    done.countDown()
                }
            }
            done.await(30, TimeUnit.SECONDS) shouldBe true
            threads.size shouldBe parallelism
            // The barrier can trip with storm tasks still queued: every globalCheckInterval tasks a
            // worker polls the global queue before its own deque, so it may take a barrier task
            // while storm tasks wait in its deque, and the others take the remaining barrier tasks
            // from the global queue rather than steal those. Wait for the handler, not the barrier.
            handled.await(30, TimeUnit.SECONDS) shouldBe true
            failures.get() shouldBe n / 2
            d.stats().failed shouldBe (n / 2).toLong()
            d.stats().threads shouldBe parallelism
        }
    }

    test("without a handler, failures go to the thread's uncaught-exception handler once each") {
        val seen = AtomicInteger()
        val old = Thread.getDefaultUncaughtExceptionHandler()
        Thread.setDefaultUncaughtExceptionHandler { _, _ -> seen.incrementAndGet() }
        try {
            StealingDispatcher(2, "uncaught").use { d ->
                repeat(10) { d.executor.execute { throw RuntimeException("boom") } }
            }
            seen.get() shouldBe 10
        } finally {
            Thread.setDefaultUncaughtExceptionHandler(old)
        }
    }

    test("a throwing handler does not kill the worker") {
        val ran = CountDownLatch(1)
        StealingDispatcher(1, "bad-handler", StealingOptions(exceptionHandler = { _, _ -> throw Error("handler") })).use { d ->
            d.executor.execute { throw RuntimeException("boom") }
            d.executor.execute { ran.countDown() }
            ran.await(10, TimeUnit.SECONDS) shouldBe true
        }
    }

    /** Closes [d] on another thread; true if close() returned within [seconds]. */
    fun closesWithin(d: StealingDispatcher, seconds: Long): Boolean {
        val closer = kotlin.concurrent.thread(name = "${d.stats().name}-closer") { d.close() }
        closer.join(TimeUnit.SECONDS.toMillis(seconds))
        return !closer.isAlive
    }

    test("a shutdown while the first worker's start is failing: the queued fair task is rejected and the pool terminates") {
        // shutdown() saw the worker counted and did not terminate; the start then failed with a
        // fair task queued, which was rejected, and before the fix nothing looked again: close()
        // waited for ever.
        val handled = java.util.concurrent.ConcurrentLinkedQueue<Runnable>()
        val d = StealingDispatcher(1, "fail-start-shutdown", StealingOptions(exceptionHandler = { t, _ -> handled += t }))
        val q = d.fairQueue("q")
        d.pool.threads.threadStarter = java.util.function.Consumer { _ ->
            val shutter = kotlin.concurrent.thread { d.pool.shutdown() }
            shutter.join(10_000)
            throw OutOfMemoryError("unable to create native thread (test)")
        }
        val task = Runnable { error("must not run") }
        try {
            q.executor.execute(task)
        } catch (e: OutOfMemoryError) { /* the starter's failure reaches the submitter's signal */ }
        d.pool.awaitTermination(TimeUnit.SECONDS.toNanos(10)) shouldBe true
        (task in handled) shouldBe true
    }

    test("a submitter that throws between claiming a global-queue slot and publishing it does not wedge the queue") {
        // Before the fix the claimed slot was never filled: every task behind it waited for ever
        // while a worker spun on it, and close() never returned.
        val d = StealingDispatcher(2, "overflow-global", StealingOptions(starvationInterval = Duration.ZERO))
        d.pool.global.afterClaim = Runnable {
            if (Thread.currentThread().name == "overflowing-submitter") throw StackOverflowError("test: between claim and publication")
        }
        val thrown = java.util.concurrent.atomic.AtomicReference<Throwable>()
        val submitter = kotlin.concurrent.thread(name = "overflowing-submitter") {
            try {
                d.executor.execute { error("must not run: its submitter got the exception") }
            } catch (e: Throwable) {
                thrown.set(e)
            }
        }
        submitter.join(10_000)
        (thrown.get() is StackOverflowError) shouldBe true
        val ran = CountDownLatch(1_000)
        repeat(1_000) { d.executor.execute { ran.countDown() } }
        ran.await(10, TimeUnit.SECONDS) shouldBe true
        closesWithin(d, 10) shouldBe true
    }

    test("a fair queue whose only offer threw between claim and publication does not hold up close()") {
        // The failed producer never scheduled the queue; quiescence asks every closed fair queue
        // for work and would wait for ever on the skipped slot.
        val d = StealingDispatcher(2, "overflow-fair", StealingOptions(starvationInterval = Duration.ZERO))
        val q = d.fairQueue("overflowing")
        val engine = FairQueueDispatcher::class.java.getDeclaredField("queue").apply { isAccessible = true }.get(q) as FairQueue
        val storage = FairQueue::class.java.getDeclaredField("queue").apply { isAccessible = true }.get(engine) as MpmcTaskQueue
        storage.afterClaim = Runnable { throw StackOverflowError("test: between claim and publication") }
        d.executor.execute { } // a worker is running
        try {
            q.executor.execute { error("must not run") }
            error("the offer should have thrown")
        } catch (e: StackOverflowError) { /* the submitter gets it */ }
        closesWithin(d, 10) shouldBe true
    }

    test("tasks submitted from a thread at the end of its stack: each one runs at most once, each execute() that returned runs, and close() returns") {
        // The shape of the report: execute() called at every depth of a recursion until the
        // stack overflows, over and over. In interpreted code the overflow can come between a
        // global-queue slot's claim and its publication.
        //
        // The ledger is per task: the overflow can also strike after the task was published
        // (inside execute()'s wake-up, or in the caller's own bookkeeping once execute() has
        // returned), so a task whose execute() threw may run; it must not run twice, and every
        // task whose execute() returned must run.
        val d = StealingDispatcher(2, "overflow-deep", StealingOptions(starvationInterval = Duration.ZERO))
        val capacity = 1 shl 21
        val runs = java.util.concurrent.atomic.AtomicIntegerArray(capacity)
        val returned = java.util.BitSet(capacity) // written by the diver only, read after join()
        var nextId = 0
        var overflowsInExecute = 0
        fun dive(depth: Int) {
            val id = nextId
            if (id < capacity) {
                nextId = id + 1
                try {
                    d.executor.execute { runs.incrementAndGet(id) }
                    returned.set(id)
                } catch (e: StackOverflowError) {
                    overflowsInExecute++
                }
            }
            dive(depth + 1)
        }
        val diver = Thread(null, {
            repeat(30) {
                try {
                    dive(0)
                } catch (e: StackOverflowError) { /* the recursion reached the end of the stack */ }
            }
        }, "overflow-diver", 256L * 1024)
        diver.start()
        diver.join(60_000)
        diver.isAlive shouldBe false
        closesWithin(d, 30) shouldBe true
        var ranTwice = 0
        var returnedNotRun = 0
        var threwButRan = 0
        for (id in 0 until nextId) {
            val n = runs.get(id)
            if (n > 1) ranTwice++
            if (returned.get(id) && n != 1) returnedNotRun++
            if (!returned.get(id) && n == 1) threwButRan++
        }
        println("tasks from the end of a stack: $nextId submitted, ${returned.cardinality()} returned, " +
            "$overflowsInExecute overflows inside execute(), $threwButRan of those ran")
        ranTwice shouldBe 0
        returnedNotRun shouldBe 0
        (threwButRan <= overflowsInExecute) shouldBe true
    }
})
