package dev.stealing

import io.kotest.assertions.throwables.shouldThrow
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.string.shouldNotContain
import io.kotest.matchers.types.shouldBeInstanceOf
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import java.time.Duration
import java.util.concurrent.Callable
import java.util.concurrent.CancellationException
import java.util.concurrent.CompletableFuture
import java.util.concurrent.CountDownLatch
import java.util.concurrent.ExecutorService
import java.util.concurrent.LinkedBlockingQueue
import java.util.concurrent.RejectedExecutionException
import java.util.concurrent.ThreadPoolExecutor
import java.util.concurrent.TimeUnit.MILLISECONDS
import java.util.concurrent.TimeUnit.SECONDS
import java.util.concurrent.atomic.AtomicBoolean
import java.util.concurrent.atomic.AtomicInteger
import java.util.concurrent.atomic.AtomicReference

/*
 * The shutdown contracts of StealingDispatcher.executor and StealingDispatcher: shutdown,
 * shutdownNow, close() (from an interrupted thread or from one of the pool's own tasks), rejection
 * after shutdown, and a closed fair queue. Where the JDK has the same contract, the scenario runs
 * first on the JDK class named in the test title (ThreadPoolExecutor for Future/ExecutorService,
 * ForkJoinPool for fork), as the reference: a failure there means the test is wrong, not the pool.
 * Then the same scenario, with the same assertions, runs on a StealingDispatcher.
 *
 * Every wait is bounded, every gate is released in a finally, and every pool is shut down and
 * awaited (bounded) after its scenario, so a contract violation fails the test instead of hanging
 * the build.
 */

/** Tests that keep work queued behind a gated worker: no thread injection, or an extra thread would run it. */
private val noInjection = StealingOptions(starvationInterval = Duration.ZERO)

/**
 * Closes a pool through [close] from a thread whose interrupt flag is set, while a task of ~50 ms
 * still runs: close() must not throw, must return only after termination, and must leave the
 * caller's interrupt flag set.
 */
private fun closeAndCheck(executor: ExecutorService, close: () -> Unit) {
    val started = CountDownLatch(1)
    val ended = CountDownLatch(1)
    executor.execute {
        started.countDown()
        try {
            Thread.sleep(50) // the work close() must wait for
        } catch (e: InterruptedException) {
            // the JDK's ExecutorService.close() turns to shutdownNow() when it is interrupted
        } finally {
            ended.countDown()
        }
    }
    started.await(10, SECONDS) shouldBe true
    var thrown: Throwable? = null
    var flagAfter: Boolean
    Thread.currentThread().interrupt()
    try {
        try {
            close()
        } catch (e: Throwable) {
            thrown = e
        }
    } finally {
        flagAfter = Thread.interrupted() // read and clear
    }
    withClue("close() threw") { thrown shouldBe null }
    withClue("close() returned only after termination") {
        executor.isTerminated shouldBe true
        ended.count shouldBe 0L
    }
    withClue("the caller's interrupt flag is set again after close()") { flagAfter shouldBe true }
}

/**
 * On a pool of one thread: a task closes the pool through [close] while 10 more tasks wait behind
 * it. close() must return without throwing, later outside submissions are rejected, and the pool
 * terminates after running the 10.
 */
private fun closeFromOwnTask(name: String, close: (StealingDispatcher) -> Unit) {
    val d = StealingDispatcher(1, name, noInjection)
    val queuedIn = CountDownLatch(1)
    val closed = CompletableFuture<Throwable?>()
    val ran = AtomicInteger()
    try {
        d.executor.execute {
            queuedIn.await(10, SECONDS)
            closed.complete(
                try {
                    close(d)
                    null
                } catch (e: Throwable) {
                    e
                },
            )
        }
        repeat(10) { d.executor.execute { ran.incrementAndGet() } }
        queuedIn.countDown()
        withClue("close() from the task threw") { closed.get(10, SECONDS) shouldBe null }
        shouldThrow<RejectedExecutionException> { d.executor.execute {} }
        d.executor.awaitTermination(10, SECONDS) shouldBe true
        ran.get() shouldBe 10
    } finally {
        queuedIn.countDown()
        d.executor.shutdownNow()
        d.executor.awaitTermination(10, SECONDS)
    }
}

class ExecutorShutdownSpec : FunSpec({

    // ---- shutdown and shutdownNow -----------------------------------------------------------

    test("after shutdown or shutdownNow, execute, submit, invokeAll and invokeAny throw RejectedExecutionException (ThreadPoolExecutor)") {
        for (now in listOf(false, true)) {
            onJdkThenOurs(threadPool(1), stealing(1, "rejects")) { s ->
                val ex = s.executor
                ex.submit(Callable { 1 }).get(10, SECONDS) shouldBe 1
                if (now) ex.shutdownNow() else ex.shutdown()
                withClue(if (now) "after shutdownNow" else "after shutdown") {
                    ex.isShutdown shouldBe true
                    shouldThrow<RejectedExecutionException> { ex.execute {} }
                    shouldThrow<RejectedExecutionException> { ex.submit(Runnable {}) }
                    shouldThrow<RejectedExecutionException> { ex.submit(Callable { 1 }) }
                    shouldThrow<RejectedExecutionException> { ex.invokeAll(listOf(Callable { 1 })) }
                    shouldThrow<RejectedExecutionException> { ex.invokeAny(listOf(Callable { 1 })) }
                    ex.awaitTermination(10, SECONDS) shouldBe true
                    ex.isTerminated shouldBe true
                }
            }
        }
    }

    test("shutdownNow returns the tasks never started and interrupts the running one (ThreadPoolExecutor)") {
        onJdkThenOurs(threadPool(1), stealing(1, "shutdown-now", noInjection)) { s ->
            val started = CountDownLatch(1)
            val interrupted = CountDownLatch(1)
            val gate = CountDownLatch(1)
            val ranQueued = AtomicInteger()
            try {
                s.executor.execute {
                    started.countDown()
                    try {
                        gate.await()
                    } catch (e: InterruptedException) {
                        interrupted.countDown()
                    }
                }
                started.await(10, SECONDS) shouldBe true
                val queued = List(5) { s.executor.submit(Callable { ranQueued.incrementAndGet() }) }
                val unstarted = s.executor.shutdownNow()
                unstarted.size shouldBe 5
                unstarted.toSet() shouldBe queued.toSet<Any>()
                s.executor.isShutdown shouldBe true
                withClue("the running task saw InterruptedException") { interrupted.await(10, SECONDS) shouldBe true }
            } finally {
                gate.countDown()
            }
            s.executor.awaitTermination(10, SECONDS) shouldBe true
            ranQueued.get() shouldBe 0
        }
    }

    test("shutdown is orderly and idempotent: tasks submitted before it still run, and the pool terminates only after them (ThreadPoolExecutor)") {
        onJdkThenOurs(threadPool(1), stealing(1, "orderly", noInjection)) { s ->
            val gate = CountDownLatch(1)
            val ran = AtomicInteger()
            try {
                s.executor.execute { gate.await() }
                repeat(100) { s.executor.execute { ran.incrementAndGet() } }
                s.executor.shutdown()
                s.executor.isShutdown shouldBe true
                s.executor.isTerminated shouldBe false
                s.executor.awaitTermination(0, SECONDS) shouldBe false
                s.executor.shutdown() // again: no effect, no exception
            } finally {
                gate.countDown()
            }
            s.executor.awaitTermination(10, SECONDS) shouldBe true
            s.executor.isTerminated shouldBe true
            ran.get() shouldBe 100
        }
    }

    // ---- close() from an interrupted thread -------------------------------------------------

    test("StealingDispatcher.close() from an interrupted thread does not throw, returns after termination, and keeps the interrupt flag set") {
        val d = StealingDispatcher(2, "close-interrupted")
        try {
            closeAndCheck(d.executor) { d.close() }
        } finally {
            Thread.interrupted()
            d.close()
        }
    }

    test("executor.close() from an interrupted thread does not throw, returns after termination, and keeps the interrupt flag set (ExecutorService.close)") {
        if (Runtime.version().feature() >= 19) { // ExecutorService.close() exists from JDK 19 on
            val reference = ThreadPoolExecutor(2, 2, 0L, MILLISECONDS, LinkedBlockingQueue())
            try {
                withClue("ThreadPoolExecutor(2) (reference)") { closeAndCheck(reference) { (reference as AutoCloseable).close() } }
            } finally {
                Thread.interrupted()
                reference.shutdownNow()
            }
        }
        val d = StealingDispatcher(2, "executor-close-interrupted")
        try {
            closeAndCheck(d.executor) { (d.executor as AutoCloseable).close() }
        } finally {
            Thread.interrupted()
            d.close()
        }
    }

    // ---- close() from one of the pool's own tasks -------------------------------------------

    test("executor.close() from one of the pool's own tasks does not throw, stops intake, and the pool terminates after the queued work") {
        closeFromOwnTask("executor-close-inside") { d -> (d.executor as AutoCloseable).close() }
    }

    test("StealingDispatcher.close() from one of the pool's own tasks does not throw, stops intake, and the pool terminates after the queued work") {
        closeFromOwnTask("close-inside") { d -> d.close() }
    }

    // ---- a closed fair queue names itself ---------------------------------------------------

    test("a coroutine dispatched to a closed fair queue of a running pool is cancelled with a CancellationException naming the queue") {
        StealingDispatcher(2, "fair-closed").use { d ->
            val q = d.fairQueue("client-a")
            q.close()
            val ran = AtomicBoolean()
            val cause = AtomicReference<Throwable?>()
            runBlocking {
                val job = launch(q) { ran.set(true) }
                job.invokeOnCompletion { cause.set(it) }
                job.join()
                job.isCancelled shouldBe true
            }
            ran.get() shouldBe false
            val message = cause.get().shouldBeInstanceOf<CancellationException>().message ?: ""
            message shouldContain "client-a"
            message shouldNotContain "StealingDispatcher is closed"
            d.executor.submit(Callable { 1 }).get(10, SECONDS) shouldBe 1 // the pool itself still runs
        }
    }
})
