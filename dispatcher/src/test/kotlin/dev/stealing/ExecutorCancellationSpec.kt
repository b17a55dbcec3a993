package dev.stealing

import io.kotest.assertions.throwables.shouldThrow
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.types.shouldBeSameInstanceAs
import java.time.Duration
import java.util.concurrent.Callable
import java.util.concurrent.CancellationException
import java.util.concurrent.CountDownLatch
import java.util.concurrent.Future
import java.util.concurrent.TimeUnit.MILLISECONDS
import java.util.concurrent.TimeUnit.SECONDS
import java.util.concurrent.atomic.AtomicBoolean
import java.util.concurrent.atomic.AtomicReference
import java.util.concurrent.locks.LockSupport

/*
 * The cancellation contracts of StealingDispatcher.executor (an ExecutorService whose submit()
 * returns ForkedTask) and of StealingDispatcher.fork: what Future.cancel does to a queued, running
 * or completed task, which cancellations interrupt (including those of invokeAll and invokeAny),
 * and that no such interrupt reaches the next task. Where the JDK has the same contract, the
 * scenario runs first on the JDK class named in the test title (ThreadPoolExecutor for
 * Future/ExecutorService, ForkJoinPool for fork), as the reference: a failure there means the test
 * is wrong, not the pool. Then the same scenario, with the same assertions, runs on a
 * StealingDispatcher.
 *
 * Every wait is bounded, every gate is released in a finally, and every pool is shut down and
 * awaited (bounded) after its scenario, so a contract violation fails the test instead of hanging
 * the build.
 */

/** Tests that keep work queued behind a gated worker: no thread injection, or an extra thread would run it. */
private val noInjection = StealingOptions(starvationInterval = Duration.ZERO)

/**
 * Hands a task that waits on a gate to [submit], cancels it with [mayInterrupt] once it runs, and
 * returns whether the task was interrupted (an InterruptedException from the gate, or its flag
 * set when the gate opened). Waits up to 10 s for the interrupt only if [expectInterrupt]; the
 * gate opens after that in any case.
 */
private fun interruptedByCancel(submit: (Callable<Int>) -> Future<*>, mayInterrupt: Boolean, expectInterrupt: Boolean): Boolean {
    val started = CountDownLatch(1)
    val finished = CountDownLatch(1)
    val gate = CountDownLatch(1)
    val interrupted = AtomicBoolean()
    val f = submit(Callable {
        started.countDown()
        try {
            gate.await()
            if (Thread.currentThread().isInterrupted) interrupted.set(true)
        } catch (e: InterruptedException) {
            interrupted.set(true)
        } finally {
            finished.countDown()
        }
        0
    })
    try {
        started.await(10, SECONDS) shouldBe true
        f.cancel(mayInterrupt) shouldBe true
        f.isCancelled shouldBe true
        f.isDone shouldBe true
        if (expectInterrupt) finished.await(10, SECONDS)
    } finally {
        gate.countDown()
    }
    finished.await(10, SECONDS) shouldBe true
    return interrupted.get()
}

/**
 * A task that counts down [started], then waits for [gate]; if interrupted while waiting it
 * counts down [interrupted]. Returns [result] either way.
 */
private fun <T> waitsForGate(started: CountDownLatch, gate: CountDownLatch, interrupted: CountDownLatch, result: T) = Callable {
    started.countDown()
    try {
        gate.await()
    } catch (e: InterruptedException) {
        interrupted.countDown()
    }
    result
}

class ExecutorCancellationSpec : FunSpec({

    // ---- cancel(true) interrupts; cancel(false) and forked tasks do not ---------------------

    test("Future.cancel(true) interrupts a running task submitted as a Callable or as a Runnable (FutureTask)") {
        onJdkThenOurs(threadPool(2), stealing(2, "cancel-interrupts", noInjection)) { s ->
            withClue("submit(Callable)") {
                interruptedByCancel({ c -> s.executor.submit(c) }, mayInterrupt = true, expectInterrupt = true) shouldBe true
            }
            withClue("submit(Runnable)") {
                interruptedByCancel({ c -> s.executor.submit(Runnable { c.call() }) }, mayInterrupt = true, expectInterrupt = true) shouldBe true
            }
        }
    }

    test("Future.cancel(false) does not interrupt a running task (FutureTask)") {
        onJdkThenOurs(threadPool(2), stealing(2, "cancel-no-interrupt", noInjection)) { s ->
            interruptedByCancel({ c -> s.executor.submit(c) }, mayInterrupt = false, expectInterrupt = false) shouldBe false
        }
    }

    test("cancel(true) of a forked task does not interrupt it (ForkJoinTask)") {
        onJdkThenOurs(forkJoinPool(2), stealing(2, "fork-cancel", noInjection)) { s ->
            interruptedByCancel(s.fork, mayInterrupt = true, expectInterrupt = false) shouldBe false
        }
    }

    test("cancel(true) of a task that has not started interrupts no thread, and the task never runs (FutureTask)") {
        onJdkThenOurs(threadPool(1), stealing(1, "cancel-queued", noInjection)) { s ->
            val started = CountDownLatch(1)
            val gate = CountDownLatch(1)
            val ranQueued = AtomicBoolean()
            val running = s.executor.submit(Callable {
                started.countDown()
                gate.await() // throws if this thread is interrupted
                Thread.currentThread().isInterrupted
            })
            try {
                started.await(10, SECONDS) shouldBe true
                val queued = s.executor.submit(Callable { ranQueued.set(true); 0 })
                queued.cancel(true) shouldBe true
            } finally {
                gate.countDown()
            }
            withClue("the running task was interrupted") { running.get(10, SECONDS) shouldBe false }
            s.executor.shutdown()
            s.executor.awaitTermination(10, SECONDS) shouldBe true
            ranQueued.get() shouldBe false
        }
    }

    test("a timed invokeAll that times out interrupts the running task it cancels (AbstractExecutorService)") {
        onJdkThenOurs(threadPool(1), stealing(1, "invoke-all-interrupt", noInjection)) { s ->
            s.executor.submit(Callable { 0 }).get(10, SECONDS) // the worker thread exists before the clock starts
            val started = CountDownLatch(1)
            val interrupted = CountDownLatch(1)
            val gate = CountDownLatch(1)
            try {
                val task = waitsForGate(started, gate, interrupted, 0)
                val futures = s.executor.invokeAll(listOf(task), 1_000, MILLISECONDS)
                futures.single().isCancelled shouldBe true
                withClue("the task started within the 1 s timeout (precondition)") { started.count shouldBe 0L }
                withClue("the cancelled task saw InterruptedException") { interrupted.await(10, SECONDS) shouldBe true }
            } finally {
                gate.countDown()
            }
        }
    }

    test("invokeAny interrupts the running tasks it cancels once one task succeeded (AbstractExecutorService)") {
        onJdkThenOurs(threadPool(2), stealing(2, "invoke-any-interrupt", noInjection)) { s ->
            val slowStarted = CountDownLatch(1)
            val interrupted = CountDownLatch(1)
            val gate = CountDownLatch(1)
            try {
                val slow = waitsForGate(slowStarted, gate, interrupted, 1)
                val fast = Callable {
                    check(slowStarted.await(10, SECONDS)) { "the slow task did not start" }
                    2
                }
                s.executor.invokeAny(listOf(slow, fast)) shouldBe 2
                withClue("the losing task saw InterruptedException") { interrupted.await(10, SECONDS) shouldBe true }
            } finally {
                gate.countDown()
            }
        }
    }

    test("after cancel(true) interrupted a task, the next task on that worker thread does not see the interrupt (ThreadPoolExecutor)") {
        onJdkThenOurs(threadPool(1), stealing(1, "cancel-then-next", noInjection)) { s ->
            val started = CountDownLatch(1)
            val firstThread = AtomicReference<Thread>()
            val sawInterrupt = AtomicBoolean()
            val first = s.executor.submit(Callable {
                firstThread.set(Thread.currentThread())
                started.countDown()
                // Waits without consuming the interrupt: the flag is still set when the task returns.
                val deadline = System.nanoTime() + SECONDS.toNanos(10)
                while (!Thread.currentThread().isInterrupted && deadline - System.nanoTime() > 0) {
                    LockSupport.parkNanos(deadline - System.nanoTime())
                }
                sawInterrupt.set(Thread.currentThread().isInterrupted)
                0
            })
            started.await(10, SECONDS) shouldBe true
            // Queued behind the first on the pool's only thread: it runs right after it, no park in between.
            val next = s.executor.submit(Callable { Thread.currentThread() to Thread.currentThread().isInterrupted })
            first.cancel(true) shouldBe true
            val (thread, interrupted) = next.get(30, SECONDS)
            withClue("cancel(true) interrupted the first task (precondition)") { sawInterrupt.get() shouldBe true }
            thread shouldBeSameInstanceAs firstThread.get()
            withClue("the next task saw the interrupt") { interrupted shouldBe false }
        }
    }

    // ---- cancel before, during and after the run --------------------------------------------

    test("cancel of a task not yet started returns true, the task never runs, isDone and isCancelled are true, get throws CancellationException, a second cancel returns false (FutureTask)") {
        onJdkThenOurs(threadPool(1), stealing(1, "cancel-unstarted", noInjection)) { s ->
            val started = CountDownLatch(1)
            val gate = CountDownLatch(1)
            val ran = AtomicBoolean()
            s.executor.execute { started.countDown(); gate.await() }
            val f: Future<Int>
            try {
                started.await(10, SECONDS) shouldBe true
                f = s.executor.submit(Callable { ran.set(true); 1 })
                f.isDone shouldBe false
                f.isCancelled shouldBe false
                f.cancel(false) shouldBe true
            } finally {
                gate.countDown()
            }
            f.isDone shouldBe true
            f.isCancelled shouldBe true
            shouldThrow<CancellationException> { f.get() }
            shouldThrow<CancellationException> { f.get(10, SECONDS) }
            shouldThrow<CancellationException> { f.get(0, SECONDS) }
            f.cancel(false) shouldBe false
            f.cancel(true) shouldBe false
            s.executor.shutdown()
            s.executor.awaitTermination(10, SECONDS) shouldBe true
            ran.get() shouldBe false
        }
    }

    test("a task is not done while it runs; once completed, cancel returns false and the result stays (FutureTask)") {
        onJdkThenOurs(threadPool(1), stealing(1, "cancel-completed")) { s ->
            val started = CountDownLatch(1)
            val gate = CountDownLatch(1)
            val f = s.executor.submit(Callable { started.countDown(); gate.await(); 9 })
            try {
                started.await(10, SECONDS) shouldBe true
                f.isDone shouldBe false
                f.isCancelled shouldBe false
            } finally {
                gate.countDown()
            }
            f.get(10, SECONDS) shouldBe 9
            f.isDone shouldBe true
            f.cancel(true) shouldBe false
            f.cancel(false) shouldBe false
            f.isCancelled shouldBe false
            f.get() shouldBe 9
        }
    }
})
