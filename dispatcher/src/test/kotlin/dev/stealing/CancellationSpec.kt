package dev.stealing

import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.ints.shouldBeLessThanOrEqual
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.Job
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import java.time.Duration
import java.util.concurrent.Callable
import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger
import kotlin.coroutines.CoroutineContext

/** These tests keep work queued behind blocked workers on purpose: no starvation injection. */
private val noInjection = StealingOptions(starvationInterval = Duration.ZERO)

class CancellationSpec : FunSpec({
    test("a queued ForkedTask that is cancelled is discarded unrun and counted") {
        StealingDispatcher(1, "cancel-count", noInjection).use { d ->
            val gate = CountDownLatch(1)
            val ran = AtomicInteger()
            d.executor.execute { gate.await() }
            val tasks = List(100) { d.fork { ran.incrementAndGet() } }
            tasks.forEach { it.cancel(false) }
            gate.countDown()
            // Not a marker task submitted last: the worker is not strictly FIFO (every
            // globalCheckInterval tasks it polls the global queue before its own deque), so a marker
            // can run, and be seen done, while cancelled tasks still wait in the deque. close()
            // returns only after every queued task was taken and the worker exited.
            d.close()
            ran.get() shouldBe 0
            d.stats().cancelled shouldBe 100
        }
    }

    test("invokeAll with a timeout cancels the tasks that did not finish") {
        // Two tasks that block until a release that comes after invokeAll has returned, so neither
        // can finish within the timeout; the one worker runs one of them (which one is the pool's
        // choice) and the other stays queued. invokeAll then cancels the unfinished tasks one after
        // the other (AbstractExecutorService, as ThreadPoolExecutor does): cancel(true) of the
        // running one interrupts it, and had it ended then, the freed worker could take the queued
        // one before the caller, preempted on a loaded machine, came to cancel it (a loop of this
        // scenario beside CPU burners saw it). So the running one counts the interrupt and keeps
        // the worker until the release: by then both are cancelled, and the queued one must never
        // start.
        //
        // The first task finishes as soon as the worker gets to it. On a machine so loaded that the
        // worker did not get to it within the timeout, invokeAll rightly cancels it too: that round
        // is run again, and the first task must finish normally in one of 3 rounds.
        var rounds = 0
        var firstFinished = false
        while (!firstFinished && rounds < 3) {
            rounds++
            val started = AtomicInteger()
            val interrupted = AtomicInteger()
            StealingDispatcher(1, "invoke-all", noInjection).use { d ->
                d.executor.submit {}.get(10, TimeUnit.SECONDS) // the worker thread is up before the timeout starts
                val release = CountDownLatch(1)
                val blocking = Callable {
                    started.incrementAndGet()
                    var sawInterrupt = false
                    while (true) {
                        try {
                            release.await()
                            break
                        } catch (e: InterruptedException) {
                            sawInterrupt = true // cancel(true): keep the worker until the release all the same
                        }
                    }
                    // If the release came before this thread got to run again, await() returned with
                    // the interrupt still pending.
                    if (sawInterrupt || Thread.currentThread().isInterrupted) interrupted.incrementAndGet()
                    2
                }
                try {
                    val futures = d.executor.invokeAll(listOf(Callable { 1 }, blocking, blocking), 2_000, TimeUnit.MILLISECONDS)
                    futures[1].isCancelled shouldBe true
                    futures[2].isCancelled shouldBe true
                    firstFinished = !futures[0].isCancelled
                    if (firstFinished) futures[0].get() shouldBe 1
                } finally {
                    release.countDown()
                }
            }
            // close() has taken every queued task: the one queued behind the blocked one never
            // started, and cancel(true) interrupted the one that did (none, if the worker got to
            // neither within the timeout).
            started.get() shouldBeLessThanOrEqual 1
            interrupted.get() shouldBe started.get()
        }
        withClue("the worker did not finish the first task within the 2 s timeout in any of $rounds rounds") {
            firstFinished shouldBe true
        }
    }

    test("cancelling a scope with 1M queued children finishes promptly, in time proportional to the work") {
        val n = 1_000_000
        StealingDispatcher(2, "cancel-1m", noInjection).use { d ->
            val started = AtomicInteger()
            val elapsedMs = runBlocking {
                withContext(d) {
                    val scope = Job()
                    // The children belong to `scope`, not to this coroutine, on purpose: passed
                    // as a CoroutineContext, not through launch's deprecated Job overload.
                    val inScope: CoroutineContext = scope
                    val gate = CountDownLatch(1)
                    // Occupy both workers so the children stay queued, then cancel them all.
                    val blockers = List(2) { launch(inScope) { gate.await() } }
                    repeat(n) { launch(inScope) { started.incrementAndGet() } }
                    val t0 = System.nanoTime()
                    scope.cancel(CancellationException("stop"))
                    gate.countDown()
                    blockers.forEach { it.join() }
                    scope.join()
                    (System.nanoTime() - t0) / 1_000_000
                }
            }
            started.get() shouldBe 0 // no child body ran: they only observed cancellation
            println("cancelling $n queued children took $elapsedMs ms")
            // A guard against superlinear cancellation (quadratic would be hours), not a benchmark:
            // on a 2-core machine this took 5-7 s in the test JVM (Dispatchers.Default as long),
            // 10-12 s with two busy processes beside it.
            (elapsedMs < 60_000) shouldBe true
        }
    }
})
