package dev.stealing

import dev.stealing.testsupport.eventually
import dev.stealing.testsupport.spin
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.ints.shouldBeLessThanOrEqual
import io.kotest.matchers.shouldBe
import io.kotest.matchers.types.shouldBeSameInstanceAs
import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.asCoroutineDispatcher
import kotlinx.coroutines.async
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import java.lang.ref.WeakReference
import java.time.Duration
import java.util.concurrent.Callable
import java.util.concurrent.CountDownLatch
import java.util.concurrent.CyclicBarrier
import java.util.concurrent.Executors
import java.util.concurrent.Future
import java.util.concurrent.RunnableFuture
import java.util.concurrent.TimeUnit.SECONDS
import java.util.concurrent.atomic.AtomicIntegerArray
import java.util.concurrent.atomic.AtomicReference
import kotlin.concurrent.thread

/*
 * What the workers of StealingDispatcher.executor do around the tasks they run: a task's callable
 * runs exactly once however often it is queued or run, a task's interrupt does not leak into the
 * next task or coroutine on its thread, and an idle pool keeps no reference to the tasks it ran.
 * Where the JDK has the same contract, the scenario runs first on the JDK class named in the test
 * title (ThreadPoolExecutor for Future/ExecutorService, ForkJoinPool for fork), as the reference:
 * a failure there means the test is wrong, not the pool. Then the same scenario, with the same
 * assertions, runs on a StealingDispatcher.
 *
 * Every wait is bounded, every gate is released in a finally, and every pool is shut down and
 * awaited (bounded) after its scenario, so a contract violation fails the test instead of hanging
 * the build.
 */

/** Tests that keep work queued behind a gated worker: no thread injection, or an extra thread would run it. */
private val noInjection = StealingOptions(starvationInterval = Duration.ZERO)

class ExecutorWorkerSpec : FunSpec({

    // ---- a ForkedTask runs its callable at most once ----------------------------------------

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

    // ---- interrupt status does not leak between tasks ---------------------------------------

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

    // ---- no retention -----------------------------------------------------------------------

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
