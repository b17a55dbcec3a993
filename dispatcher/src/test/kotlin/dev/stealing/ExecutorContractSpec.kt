package dev.stealing

import io.kotest.assertions.throwables.shouldThrow
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.ints.shouldBeLessThanOrEqual
import io.kotest.matchers.longs.shouldBeGreaterThanOrEqual
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.string.shouldNotContain
import io.kotest.matchers.types.shouldBeInstanceOf
import io.kotest.matchers.types.shouldBeSameInstanceAs
import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.asCoroutineDispatcher
import kotlinx.coroutines.async
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import java.io.IOException
import java.lang.ref.WeakReference
import java.time.Duration
import java.util.concurrent.Callable
import java.util.concurrent.CancellationException
import java.util.concurrent.CompletableFuture
import java.util.concurrent.CountDownLatch
import java.util.concurrent.CyclicBarrier
import java.util.concurrent.ExecutionException
import java.util.concurrent.ExecutorService
import java.util.concurrent.Executors
import java.util.concurrent.ForkJoinPool
import java.util.concurrent.ForkJoinTask
import java.util.concurrent.Future
import java.util.concurrent.LinkedBlockingQueue
import java.util.concurrent.RejectedExecutionException
import java.util.concurrent.RunnableFuture
import java.util.concurrent.ThreadPoolExecutor
import java.util.concurrent.TimeUnit.MILLISECONDS
import java.util.concurrent.TimeUnit.NANOSECONDS
import java.util.concurrent.TimeUnit.SECONDS
import java.util.concurrent.TimeoutException
import java.util.concurrent.atomic.AtomicBoolean
import java.util.concurrent.atomic.AtomicInteger
import java.util.concurrent.atomic.AtomicIntegerArray
import java.util.concurrent.atomic.AtomicReference
import java.util.concurrent.locks.LockSupport
import kotlin.concurrent.thread

/*
 * The java.util.concurrent contracts of StealingDispatcher.executor (an ExecutorService whose
 * submit() returns ForkedTask) and of StealingDispatcher.fork, checked the way a demanding Java
 * user relies on them. Where the JDK has the same contract, the scenario runs first on the JDK
 * class named in the test title (ThreadPoolExecutor for Future/ExecutorService, ForkJoinPool for
 * fork), as the reference: a failure there means the test is wrong, not the pool. Then the same
 * scenario, with the same assertions, runs on a StealingDispatcher.
 *
 * Every wait is bounded, every gate is released in a finally, and every pool is shut down and
 * awaited (bounded) after its scenario, so a contract violation fails the test instead of hanging
 * the build.
 */

/** Tests that keep work queued behind a gated worker: no thread injection, or an extra thread would run it. */
private val noInjection = StealingOptions(starvationInterval = Duration.ZERO)

/**
 * A pool a scenario runs on: its [executor], how it [fork]s a callable (ForkJoinTask for
 * ForkJoinPool, ForkedTask for ours, plain submit for ThreadPoolExecutor), and a [label] for
 * failure messages.
 */
private class Subject(
    val label: String,
    val executor: ExecutorService,
    /** A JDK pool, run for reference; false for ours. */
    val reference: Boolean,
    val fork: (Callable<Int>) -> Future<Int>,
)

private fun threadPool(n: Int): () -> Subject = {
    val ex = ThreadPoolExecutor(n, n, 0L, MILLISECONDS, LinkedBlockingQueue())
    Subject("ThreadPoolExecutor($n) (reference)", ex, reference = true) { c -> ex.submit(c) }
}

private fun forkJoinPool(n: Int): () -> Subject = {
    val p = ForkJoinPool(n)
    Subject("ForkJoinPool($n) (reference)", p, reference = true) { c -> p.submit(ForkJoinTask.adapt(c)) }
}

private fun stealing(n: Int, name: String, options: StealingOptions = StealingOptions.DEFAULT): () -> Subject = {
    val d = StealingDispatcher(n, name, options)
    Subject("StealingDispatcher($n, \"$name\")", d.executor, reference = false) { c -> d.fork(c) }
}

/**
 * Runs [scenario] on the JDK's [reference] pool, then on [ours]. Each pool is shut down after its
 * run (shutdownNow, then at most 10 s for termination); failures name the pool.
 */
private fun onJdkThenOurs(reference: () -> Subject, ours: () -> Subject, scenario: (Subject) -> Unit) {
    for (create in listOf(reference, ours)) {
        val s = create()
        try {
            withClue(s.label) { scenario(s) }
        } catch (e: AssertionError) {
            throw e
        } catch (e: Throwable) {
            throw AssertionError("${s.label}: unexpected $e", e)
        } finally {
            s.executor.shutdownNow()
            s.executor.awaitTermination(10, SECONDS)
        }
    }
}

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

/** Takes stats() snapshots and records any decrease of executed or failed between successive ones. */
private class StatsSampler(private val d: StealingDispatcher) {
    private var lastExecuted = -1L
    private var lastFailed = -1L
    private val violations = ArrayList<String>()
    private val stop = AtomicBoolean()
    private val thread = thread(isDaemon = true, name = "stats-sampler") {
        while (!stop.get()) {
            sample()
            LockSupport.parkNanos(200_000) // pacing only
        }
    }

    /** One snapshot, compared with the previous one (under the lock: snapshots are compared in the order taken). */
    @Synchronized
    fun sample(): StealingStats {
        val s = d.stats()
        if (s.executed < lastExecuted && violations.size < 10) violations += "executed went from $lastExecuted to ${s.executed}"
        if (s.failed < lastFailed && violations.size < 10) violations += "failed went from $lastFailed to ${s.failed}"
        lastExecuted = s.executed
        lastFailed = s.failed
        return s
    }

    fun stop() {
        stop.set(true)
        thread.join(10_000)
    }

    @Synchronized
    fun violations(): List<String> = ArrayList(violations)
}

/**
 * On a pool of 1 with keepAlive 50 ms: the core worker waits inside managedBlock, so the [tasks]
 * tasks made by [task] and submitted from outside run on an injected extra thread; each counts
 * down [done] (or its failure reaches the handler, which does). Then the blocker is released and
 * this waits until the extra thread retired, sampling stats() all along.
 */
private fun runOnExtraThreadUntilItRetires(d: StealingDispatcher, sampler: StatsSampler, tasks: Int, task: (CountDownLatch) -> Runnable, done: CountDownLatch) {
    val inBlock = CountDownLatch(1)
    val release = CountDownLatch(1)
    val blocker = d.executor.submit(Runnable {
        StealingDispatcher.managedBlock(object : ForkJoinPool.ManagedBlocker {
            override fun block(): Boolean {
                inBlock.countDown()
                release.await()
                return true
            }

            override fun isReleasable(): Boolean = release.count == 0L
        })
    })
    try {
        inBlock.await(10, SECONDS) shouldBe true
        repeat(tasks) { d.executor.execute(task(done)) }
        sampler.sample()
        done.await(60, SECONDS) shouldBe true
        sampler.sample()
    } finally {
        release.countDown()
    }
    blocker.get(10, SECONDS)
    withClue("an extra thread was injected (precondition)") { (sampler.sample().injectedThreads >= 1) shouldBe true }
    withClue("the extra thread retired (precondition)") {
        eventually(30_000) { sampler.sample().retiredThreads >= 1 } shouldBe true
    }
    repeat(20) { sampler.sample() } // a few more after the retirement
}

class ExecutorContractSpec : FunSpec({

    // ---- 1. get with a zero or negative timeout --------------------------------------------

    test("Future.get with a zero or negative timeout returns a finished value and times out an unfinished one (FutureTask)") {
        onJdkThenOurs(threadPool(2), stealing(2, "get-zero")) { s ->
            getWithZeroOrNegativeTimeout { c -> s.executor.submit(c) }
        }
    }

    test("ForkedTask.get of a forked task with a zero or negative timeout returns a finished value and times out an unfinished one (ForkJoinTask)") {
        onJdkThenOurs(forkJoinPool(2), stealing(2, "fork-get-zero")) { s -> getWithZeroOrNegativeTimeout(s.fork) }
    }

    // ---- 2. get on an interrupted thread ---------------------------------------------------

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

    // ---- 3. awaitTermination with a zero or negative timeout -------------------------------

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

    // ---- 4. timed invokeAll / invokeAny ----------------------------------------------------

    test("timed invokeAll whose timeout runs out while it waits never throws IllegalArgumentException; every future is done, either completed or cancelled (AbstractExecutorService)") {
        onJdkThenOurs(threadPool(2), stealing(2, "invoke-all-timed")) { s ->
            val tasks = List(2) { i -> Callable { Thread.sleep(5); i } }
            repeat(200) { round ->
                val futures = s.executor.invokeAll(tasks, 5, MILLISECONDS)
                futures.size shouldBe 2
                futures.forEachIndexed { i, f ->
                    withClue("round $round, task $i") {
                        f.isDone shouldBe true
                        if (!f.isCancelled) f.get() shouldBe i
                    }
                }
            }
        }
    }

    test("timed invokeAny whose tasks do not finish in time throws TimeoutException, also with a zero or negative timeout (AbstractExecutorService)") {
        onJdkThenOurs(threadPool(2), stealing(2, "invoke-any-timed")) { s ->
            val gate = CountDownLatch(1)
            try {
                val tasks = List(2) { i -> Callable { gate.await(); i } }
                withClue("20 ms") { shouldThrow<TimeoutException> { s.executor.invokeAny(tasks, 20, MILLISECONDS) } }
                withClue("0") { shouldThrow<TimeoutException> { s.executor.invokeAny(tasks, 0, MILLISECONDS) } }
                withClue("-1 ms") { shouldThrow<TimeoutException> { s.executor.invokeAny(tasks, -1, MILLISECONDS) } }
            } finally {
                gate.countDown()
            }
        }
    }

    // ---- 5. cancel(true) interrupts; cancel(false) and forked tasks do not ------------------

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

    // ---- 6. interrupt status does not leak between tasks ------------------------------------

    test("a task that leaves its thread interrupted does not leak the interrupt into the next task on that thread (ThreadPoolExecutor)") {
        onJdkThenOurs(threadPool(1), stealing(1, "interrupt-leak", noInjection)) { s ->
            val gate = CountDownLatch(1)
            val interrupter = AtomicReference<Thread>()
            val next: Future<Pair<Thread, Boolean>>
            try {
                // Held back by the gate, the interrupting task and the next one run back to back.
                s.executor.execute { gate.await() }
                s.executor.execute { interrupter.set(Thread.currentThread()); Thread.currentThread().interrupt() }
                next = s.executor.submit(Callable { Thread.currentThread() to Thread.currentThread().isInterrupted })
            } finally {
                gate.countDown()
            }
            val (thread, interrupted) = next.get(10, SECONDS)
            thread shouldBeSameInstanceAs interrupter.get()
            withClue("back to back: the next task saw the interrupt") { interrupted shouldBe false }
            // And with the worker idle in between.
            s.executor.submit(Callable { Thread.currentThread().interrupt(); 0 }).get(10, SECONDS)
            val (thread2, interrupted2) = s.executor.submit(Callable { Thread.currentThread() to Thread.currentThread().isInterrupted }).get(10, SECONDS)
            thread2 shouldBeSameInstanceAs interrupter.get()
            withClue("after an idle worker: the next task saw the interrupt") { interrupted2 shouldBe false }
        }
    }

    test("a coroutine that leaves its worker interrupted does not leak the interrupt into the next coroutine (kotlinx executor dispatcher)") {
        fun leak(dispatcher: CoroutineDispatcher): Pair<Boolean, Boolean> = runBlocking {
            val gate = CountDownLatch(1)
            val interrupter = AtomicReference<Thread>()
            val next = try {
                launch(dispatcher) { gate.await() } // keeps the next two back to back
                launch(dispatcher) { interrupter.set(Thread.currentThread()); Thread.currentThread().interrupt() }
                async(dispatcher) { Thread.currentThread() to Thread.currentThread().isInterrupted }
            } finally {
                gate.countDown()
            }
            val (thread, interrupted) = next.await()
            (thread === interrupter.get()) to interrupted
        }
        val reference = Executors.newFixedThreadPool(1)
        try {
            withClue("Executors.newFixedThreadPool(1).asCoroutineDispatcher() (reference)") {
                leak(reference.asCoroutineDispatcher()) shouldBe (true to false)
            }
        } finally {
            reference.shutdownNow()
        }
        StealingDispatcher(1, "coroutine-interrupt-leak", noInjection).use { d ->
            val (sameThread, interrupted) = leak(d)
            sameThread shouldBe true
            withClue("the next coroutine saw the interrupt") { interrupted shouldBe false }
        }
    }

    // ---- 7. close() from an interrupted thread ---------------------------------------------

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

    // ---- 8. close() from one of the pool's own tasks ---------------------------------------

    test("executor.close() from one of the pool's own tasks does not throw, stops intake, and the pool terminates after the queued work") {
        closeFromOwnTask("executor-close-inside") { d -> (d.executor as AutoCloseable).close() }
    }

    test("StealingDispatcher.close() from one of the pool's own tasks does not throw, stops intake, and the pool terminates after the queued work") {
        closeFromOwnTask("close-inside") { d -> d.close() }
    }

    // ---- 9. a ForkedTask runs its callable at most once -----------------------------------

    test("a submitted or forked task queued twice and also run directly runs its callable exactly once (FutureTask)") {
        onJdkThenOurs(threadPool(2), stealing(2, "queued-twice")) { s ->
            val rounds = 1_000
            val runs = AtomicIntegerArray(rounds)
            repeat(rounds) { round ->
                val t = s.fork(Callable { runs.incrementAndGet(round); spin(20_000); round }) as RunnableFuture<Int>
                s.executor.execute(t)
                t.run() // while or after a worker runs it
                t.get(10, SECONDS) shouldBe round
            }
            s.executor.shutdown() // every queued copy has been taken once the pool terminates
            s.executor.awaitTermination(30, SECONDS) shouldBe true
            val wrong = (0 until rounds).filter { runs[it] != 1 }
            withClue("rounds whose callable did not run exactly once: ${wrong.size} (first: ${wrong.take(5).map { it to runs[it] }})") {
                wrong.size shouldBe 0
            }
        }
    }

    test("two threads running a queued task concurrently run its callable exactly once (FutureTask)") {
        onJdkThenOurs(threadPool(1), stealing(1, "run-concurrently", noInjection)) { s ->
            val rounds = 200
            val runs = AtomicIntegerArray(rounds)
            repeat(rounds) { round ->
                val gate = CountDownLatch(1)
                s.executor.execute { gate.await() } // the queued copy waits until both direct runs are over
                try {
                    val t = s.fork(Callable { runs.incrementAndGet(round); spin(500_000); round }) as RunnableFuture<Int>
                    val barrier = CyclicBarrier(2)
                    val runners = List(2) { thread(isDaemon = true) { barrier.await(10, SECONDS); t.run() } }
                    runners.forEach { it.join(10_000) }
                    t.get(10, SECONDS) shouldBe round
                } finally {
                    gate.countDown()
                }
            }
            s.executor.shutdown()
            s.executor.awaitTermination(30, SECONDS) shouldBe true
            val wrong = (0 until rounds).filter { runs[it] != 1 }
            withClue("rounds whose callable did not run exactly once: ${wrong.size} (first: ${wrong.take(5).map { it to runs[it] }})") {
                wrong.size shouldBe 0
            }
        }
    }

    // ---- 10. stats() counters are monotonic ------------------------------------------------

    test("stats().executed never decreases and still counts the tasks of an extra thread after it retires") {
        StealingDispatcher(1, "stats-executed", StealingOptions(keepAlive = Duration.ofMillis(50))).use { d ->
            val sampler = StatsSampler(d)
            val last = try {
                runOnExtraThreadUntilItRetires(d, sampler, 20_000, { done -> Runnable { done.countDown() } }, CountDownLatch(20_000))
                sampler.sample()
            } finally {
                sampler.stop()
            }
            withClue("successive snapshots") { sampler.violations() shouldBe emptyList() }
            last.executed shouldBeGreaterThanOrEqual 20_001L
        }
    }

    test("stats().failed never decreases and still equals the exception handler's count after an extra thread retires") {
        val handled = AtomicInteger()
        val failures = CountDownLatch(1_000)
        val options = StealingOptions(
            keepAlive = Duration.ofMillis(50),
            exceptionHandler = { _, _ ->
                handled.incrementAndGet()
                failures.countDown()
            },
        )
        StealingDispatcher(1, "stats-failed", options).use { d ->
            val sampler = StatsSampler(d)
            val last = try {
                runOnExtraThreadUntilItRetires(d, sampler, 1_000, { Runnable { throw IllegalStateException("expected") } }, failures)
                sampler.sample()
            } finally {
                sampler.stop()
            }
            withClue("successive snapshots") { sampler.violations() shouldBe emptyList() }
            handled.get() shouldBe 1_000
            last.failed shouldBe handled.get().toLong()
        }
    }

    // ---- 11. options -----------------------------------------------------------------------

    test("StealingOptions accepts starvationInterval = Duration.ofSeconds(Long.MAX_VALUE), and a pool with it runs tasks") {
        val options = StealingOptions(starvationInterval = Duration.ofSeconds(Long.MAX_VALUE))
        StealingDispatcher(1, "huge-interval", options).use { d ->
            d.executor.submit(Callable { 42 }).get(10, SECONDS) shouldBe 42
        }
        StealingDispatcher(1, "huge-interval-copy", StealingOptions.DEFAULT.withStarvationInterval(Duration.ofSeconds(Long.MAX_VALUE))).use { d ->
            d.fork { 43 }.get(10, SECONDS) shouldBe 43
        }
    }

    test("StealingOptions rejects initialDequeCapacity = 2^30 with IllegalArgumentException naming it") {
        shouldThrow<IllegalArgumentException> { StealingOptions(initialDequeCapacity = 1 shl 30) }.message shouldContain "initialDequeCapacity"
        shouldThrow<IllegalArgumentException> { StealingOptions.DEFAULT.withInitialDequeCapacity(1 shl 30) }.message shouldContain "initialDequeCapacity"
    }

    // ---- 12. a closed fair queue names itself ----------------------------------------------

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

    // ---- Other ExecutorService / Future contracts ------------------------------------------

    test("invokeAll of an empty collection returns an empty list, timed or not; invokeAny of one throws IllegalArgumentException (AbstractExecutorService)") {
        onJdkThenOurs(threadPool(1), stealing(1, "empty")) { s ->
            s.executor.invokeAll(emptyList<Callable<Int>>()) shouldBe emptyList()
            s.executor.invokeAll(emptyList<Callable<Int>>(), 1, SECONDS) shouldBe emptyList()
            shouldThrow<IllegalArgumentException> { s.executor.invokeAny(emptyList<Callable<Int>>()) }
            shouldThrow<IllegalArgumentException> { s.executor.invokeAny(emptyList<Callable<Int>>(), 1, SECONDS) }
        }
    }

    test("a null task or collection throws NullPointerException from execute, submit, invokeAll and invokeAny (ThreadPoolExecutor)") {
        onJdkThenOurs(threadPool(1), stealing(1, "nulls")) { s ->
            val ex = s.executor
            withClue("execute(null)") { shouldThrow<NullPointerException> { ex.execute(null) } }
            withClue("submit(null as Runnable)") { shouldThrow<NullPointerException> { ex.submit(null as Runnable?) } }
            withClue("submit(null as Runnable, result)") { shouldThrow<NullPointerException> { ex.submit(null as Runnable?, 1) } }
            withClue("submit(null as Callable)") { shouldThrow<NullPointerException> { ex.submit(null as Callable<Int>?) } }
            withClue("invokeAll(null)") { shouldThrow<NullPointerException> { ex.invokeAll(null as Collection<Callable<Int>>?) } }
            withClue("invokeAll(null, 1 s)") { shouldThrow<NullPointerException> { ex.invokeAll(null as Collection<Callable<Int>>?, 1, SECONDS) } }
            withClue("invokeAll([task, null])") { shouldThrow<NullPointerException> { ex.invokeAll(listOf(Callable { 1 }, null)) } }
            withClue("invokeAny(null)") { shouldThrow<NullPointerException> { ex.invokeAny(null as Collection<Callable<Int>>?) } }
            withClue("invokeAny([null])") { shouldThrow<NullPointerException> { ex.invokeAny(listOf<Callable<Int>?>(null)) } }
            // The pool is still usable.
            ex.submit(Callable { 3 }).get(10, SECONDS) shouldBe 3
        }
    }

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

    test("get of a task that threw throws ExecutionException whose cause is the exception itself, checked or unchecked (FutureTask)") {
        onJdkThenOurs(threadPool(1), stealing(1, "get-failed")) { s ->
            val unchecked = IllegalStateException("unchecked")
            val checked = IOException("checked")
            val error = AssertionError("error")
            val f1 = s.executor.submit(Callable<Int> { throw unchecked })
            val f2 = s.executor.submit(Callable<Int> { throw checked })
            val f3 = s.executor.submit(Runnable { throw error })
            shouldThrow<ExecutionException> { f1.get() }.cause shouldBeSameInstanceAs unchecked
            shouldThrow<ExecutionException> { f1.get(10, SECONDS) }.cause shouldBeSameInstanceAs unchecked
            shouldThrow<ExecutionException> { f2.get(10, SECONDS) }.cause shouldBeSameInstanceAs checked
            shouldThrow<ExecutionException> { f3.get(10, SECONDS) }.cause shouldBeSameInstanceAs error
            f1.isDone shouldBe true
            f1.isCancelled shouldBe false
        }
    }

    test("submit(Runnable, result) yields the result and submit(Runnable) yields null (AbstractExecutorService)") {
        onJdkThenOurs(threadPool(1), stealing(1, "submit-runnable")) { s ->
            val ran = AtomicInteger()
            s.executor.submit(Runnable { ran.incrementAndGet() }, "result").get(10, SECONDS) shouldBe "result"
            s.executor.submit(Runnable { ran.incrementAndGet() }).get(10, SECONDS) shouldBe null
            ran.get() shouldBe 2
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

    test("invokeAll returns when every task is done, with the futures in the order of the tasks and each failure in its own future (AbstractExecutorService)") {
        onJdkThenOurs(threadPool(2), stealing(2, "invoke-all")) { s ->
            val tasks = List(20) { i ->
                Callable {
                    if (i % 3 == 0) Thread.sleep(2) // some finish later than others
                    if (i % 5 == 4) throw IllegalStateException("task $i")
                    i
                }
            }
            for (timed in listOf(false, true)) {
                val futures = if (timed) s.executor.invokeAll(tasks, 60, SECONDS) else s.executor.invokeAll(tasks)
                withClue(if (timed) "timed" else "untimed") {
                    futures.size shouldBe 20
                    futures.forEachIndexed { i, f ->
                        f.isDone shouldBe true
                        f.isCancelled shouldBe false
                        if (i % 5 == 4) {
                            shouldThrow<ExecutionException> { f.get(0, SECONDS) }.cause?.message shouldBe "task $i"
                        } else {
                            f.get(0, SECONDS) shouldBe i
                        }
                    }
                }
            }
        }
    }

    test("invokeAny returns the result of a task that succeeded although others failed, and throws ExecutionException when all fail (AbstractExecutorService)") {
        onJdkThenOurs(threadPool(2), stealing(2, "invoke-any")) { s ->
            val failing = Callable<Int> { throw IllegalStateException("fails") }
            s.executor.invokeAny(listOf(failing, failing, Callable { 7 }, failing)) shouldBe 7
            s.executor.invokeAny(listOf(failing, Callable { 8 }), 60, SECONDS) shouldBe 8
            shouldThrow<ExecutionException> { s.executor.invokeAny(listOf(failing, failing)) }
                .cause.shouldBeInstanceOf<IllegalStateException>()
            shouldThrow<ExecutionException> { s.executor.invokeAny(listOf(failing, failing), 60, SECONDS) }
                .cause.shouldBeInstanceOf<IllegalStateException>()
        }
    }

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

    test("once idle, the pool keeps no reference to the tasks it ran, stolen ones included") {
        // A thief leaves its victim's ring slot as it was, and only the owner may clear it.
        // Here one task queues 1,000 on its worker's deque and waits until they have all run,
        // so the other worker steals every one of them. Before the owner cleared its ring on
        // finding it empty, all 1,000 (and whatever they captured) stayed reachable.
        StealingDispatcher(2, "no-retention").use { d ->
            val count = 1_000
            val ran = CountDownLatch(count)
            val payloads = ArrayList<WeakReference<Any>>(count)
            val done = CountDownLatch(1)
            d.executor.execute {
                repeat(count) {
                    val payload = ByteArray(16)
                    payloads += WeakReference(payload)
                    d.executor.execute { if (payload.size == 16) ran.countDown() }
                }
                ran.await(30, SECONDS)
                done.countDown()
            }
            done.await(30, SECONDS) shouldBe true
            ran.count shouldBe 0L
            // Allowance: the last task each worker ran may still sit in a dead local of its frame.
            fun alive() = payloads.count { it.get() != null }
            eventually(20_000) { System.gc(); alive() <= 2 } // polls the collector, not the pool
            withClue("payloads still reachable after the pool went idle") { alive() shouldBeLessThanOrEqual 2 }
        }
    }
})

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
