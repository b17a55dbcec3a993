package dev.stealing

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
        val started = AtomicInteger()
        StealingDispatcher(1, "invoke-all", noInjection).use { d ->
            // The first task must finish within the timeout: start the worker thread beforehand, and
            // leave a loaded machine ample time (the timeout is also how long the test waits).
            d.executor.submit {}.get(10, TimeUnit.SECONDS)
            val release = CountDownLatch(1)
            // Two tasks that block: the one worker runs one of them and the other stays queued.
            // Which one runs first is the pool's choice (its periodic look takes the oldest task
            // of its deque), so the test does not assume it.
            val blocking = Callable { started.incrementAndGet(); release.await(); 2 }
            val futures = d.executor.invokeAll(listOf(Callable { 1 }, blocking, blocking), 2_000, TimeUnit.MILLISECONDS)
            release.countDown()
            futures[0].get() shouldBe 1
            futures[1].isCancelled shouldBe true
            futures[2].isCancelled shouldBe true
        }
        // At most one blocking task ever started: the one queued behind it never ran, even after
        // the release (none, if a loaded machine kept the worker from either within the timeout).
        started.get() shouldBeLessThanOrEqual 1
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
