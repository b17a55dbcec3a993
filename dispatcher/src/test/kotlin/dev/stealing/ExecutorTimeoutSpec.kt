package dev.stealing

import io.kotest.assertions.throwables.shouldThrow
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.longs.shouldBeGreaterThanOrEqual
import io.kotest.matchers.shouldBe
import java.util.concurrent.Callable
import java.util.concurrent.CountDownLatch
import java.util.concurrent.Future
import java.util.concurrent.TimeUnit.MILLISECONDS
import java.util.concurrent.TimeUnit.NANOSECONDS
import java.util.concurrent.TimeUnit.SECONDS
import java.util.concurrent.TimeoutException

/*
 * Timeouts and interrupted callers in the java.util.concurrent contracts of
 * StealingDispatcher.executor and StealingDispatcher.fork: Future.get and ForkedTask.get with a
 * zero or negative timeout or on an interrupted thread, awaitTermination with a zero or negative
 * timeout, and timed waits that last at least their timeout. Where the JDK has the same contract,
 * the scenario runs first on the JDK class named in the test title (ThreadPoolExecutor for
 * Future/ExecutorService, ForkJoinPool for fork), as the reference: a failure there means the test
 * is wrong, not the pool. Then the same scenario, with the same assertions, runs on a
 * StealingDispatcher.
 *
 * Every wait is bounded, every gate is released in a finally, and every pool is shut down and
 * awaited (bounded) after its scenario, so a contract violation fails the test instead of hanging
 * the build.
 */

/** Runs [block] with the calling thread's interrupt flag set; the flag is cleared afterwards whatever happens. */
private inline fun <T> whileInterrupted(block: () -> T): T {
    Thread.currentThread().interrupt()
    try {
        return block()
    } finally {
        Thread.interrupted()
    }
}

/** Zero and negative timeouts: a finished task's value, TimeoutException for an unfinished one. */
private fun getWithZeroOrNegativeTimeout(submit: (Callable<Int>) -> Future<Int>) {
    val done = submit(Callable { 7 })
    done.get(10, SECONDS) shouldBe 7
    done.get(0, SECONDS) shouldBe 7
    done.get(-1, SECONDS) shouldBe 7
    done.get(Long.MIN_VALUE, NANOSECONDS) shouldBe 7
    val gate = CountDownLatch(1)
    val pending = submit(Callable { gate.await(); 8 })
    try {
        shouldThrow<TimeoutException> { pending.get(0, SECONDS) }
        shouldThrow<TimeoutException> { pending.get(-1, MILLISECONDS) }
        shouldThrow<TimeoutException> { pending.get(Long.MIN_VALUE, NANOSECONDS) }
    } finally {
        gate.countDown()
    }
    pending.get(10, SECONDS) shouldBe 8
}

/**
 * get on an interrupted thread: InterruptedException while the task is unfinished, whatever the
 * timeout; the value once it is done (with [checkDone]).
 */
private fun getWhileInterrupted(submit: (Callable<Int>) -> Future<Int>, checkDone: Boolean) {
    val gate = CountDownLatch(1)
    val f = submit(Callable { gate.await(); 5 })
    try {
        withClue("get()") { whileInterrupted { shouldThrow<InterruptedException> { f.get() } } }
        withClue("get(0, SECONDS)") { whileInterrupted { shouldThrow<InterruptedException> { f.get(0, SECONDS) } } }
        withClue("get(-1, SECONDS)") { whileInterrupted { shouldThrow<InterruptedException> { f.get(-1, SECONDS) } } }
        withClue("get(10, SECONDS)") { whileInterrupted { shouldThrow<InterruptedException> { f.get(10, SECONDS) } } }
    } finally {
        gate.countDown()
    }
    f.get(10, SECONDS) shouldBe 5
    if (checkDone) {
        withClue("done, get()") { whileInterrupted { f.get() } shouldBe 5 }
        withClue("done, get(0, SECONDS)") { whileInterrupted { f.get(0, SECONDS) } shouldBe 5 }
        withClue("done, get(10, SECONDS)") { whileInterrupted { f.get(10, SECONDS) } shouldBe 5 }
    }
}

class ExecutorTimeoutSpec : FunSpec({

    // ---- Future.get with a zero or negative timeout -----------------------------------------

    test("Future.get with a zero or negative timeout returns a finished value and times out an unfinished one (FutureTask)") {
        onJdkThenOurs(threadPool(2), stealing(2, "get-zero")) { s ->
            getWithZeroOrNegativeTimeout { c -> s.executor.submit(c) }
        }
    }

    test("ForkedTask.get of a forked task with a zero or negative timeout returns a finished value and times out an unfinished one (ForkJoinTask)") {
        onJdkThenOurs(forkJoinPool(2), stealing(2, "fork-get-zero")) { s -> getWithZeroOrNegativeTimeout(s.fork) }
    }

    // ---- Future.get on an interrupted thread ------------------------------------------------

    test("Future.get on an interrupted thread throws InterruptedException while the task is unfinished, even with a zero timeout, and returns the value once it is done (FutureTask)") {
        onJdkThenOurs(threadPool(2), stealing(2, "get-interrupted")) { s ->
            getWhileInterrupted({ c -> s.executor.submit(c) }, checkDone = true)
        }
    }

    test("ForkedTask.get of a forked task on an interrupted thread throws InterruptedException while the task is unfinished, even with a zero timeout, and returns the value once it is done (ForkJoinTask)") {
        onJdkThenOurs(forkJoinPool(2), stealing(2, "fork-get-interrupted")) { s ->
            // Once done: JDK 17's ForkJoinTask.get still throws InterruptedException, JDK 25's
            // returns the value, as FutureTask does and as ForkedTask must.
            getWhileInterrupted(s.fork, checkDone = !s.reference || Runtime.version().feature() >= 25)
        }
    }

    // ---- awaitTermination with a zero or negative timeout -----------------------------------

    test("awaitTermination with a zero or negative timeout returns false on a running pool and true on a terminated one (ThreadPoolExecutor)") {
        onJdkThenOurs(threadPool(1), stealing(1, "await-zero")) { s ->
            s.executor.submit(Callable { 1 }).get(10, SECONDS) shouldBe 1 // a started pool
            s.executor.awaitTermination(0, SECONDS) shouldBe false
            s.executor.awaitTermination(-1, SECONDS) shouldBe false
            s.executor.awaitTermination(Long.MIN_VALUE, NANOSECONDS) shouldBe false
            s.executor.shutdown()
            s.executor.awaitTermination(10, SECONDS) shouldBe true
            s.executor.awaitTermination(0, SECONDS) shouldBe true
            s.executor.awaitTermination(-1, SECONDS) shouldBe true
        }
    }

    // ---- timed waits last at least their timeout --------------------------------------------

    test("Future.get and awaitTermination with a timeout wait at least that long before they give up (FutureTask, ThreadPoolExecutor)") {
        onJdkThenOurs(threadPool(1), stealing(1, "timed-waits")) { s ->
            val gate = CountDownLatch(1)
            val f = s.executor.submit(Callable { gate.await(); 1 })
            try {
                var t0 = System.nanoTime()
                shouldThrow<TimeoutException> { f.get(50, MILLISECONDS) }
                ((System.nanoTime() - t0) / 1_000_000) shouldBeGreaterThanOrEqual 50L
                t0 = System.nanoTime()
                s.executor.awaitTermination(50, MILLISECONDS) shouldBe false
                ((System.nanoTime() - t0) / 1_000_000) shouldBeGreaterThanOrEqual 50L
            } finally {
                gate.countDown()
            }
            f.get(10, SECONDS) shouldBe 1
        }
    }
})
