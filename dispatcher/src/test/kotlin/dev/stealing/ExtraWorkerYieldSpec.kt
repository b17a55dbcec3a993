package dev.stealing

import dev.stealing.internal.worker.Worker
import dev.stealing.testsupport.eventually
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.Job
import kotlinx.coroutines.launch
import kotlinx.coroutines.yield
import java.time.Duration
import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicBoolean
import java.util.concurrent.atomic.AtomicInteger

/**
 * The yield queue of an extra worker (one started in place of a blocked worker): what it
 * yields goes to its own yield queue, it hands that queue over when the blocked workers return,
 * and shutdown and shutdownNow still run or cancel what is queued there.
 */
class ExtraWorkerYieldSpec : FunSpec({
    test("an extra worker running in place of a blocked one yields to its own yield queue, not the global queue") {
        // An extra thread can stand in for a core worker for a long time (an extra that went
        // idle last is the first an ordinary wake-up pops); its yields then went through the
        // global queue, which made a yield storm 2-6 x slower.
        StealingDispatcher(2, "yield-extra-local", StealingOptions(starvationInterval = Duration.ZERO)).use { d ->
            val scope = CoroutineScope(d)
            val gate = CountDownLatch(1)
            val looped = CountDownLatch(1)
            val yieldsOnCore = AtomicInteger()
            try {
                blockWorkers(scope, 2, gate)
                val globalBefore = d.stats().globalPops
                scope.launch { // both core workers are blocked: this runs on extra threads
                    repeat(2_000) {
                        yield()
                        if (!(Thread.currentThread() as Worker).isExtra) yieldsOnCore.incrementAndGet()
                    }
                    looped.countDown()
                }
                looped.await(20, TimeUnit.SECONDS) shouldBe true
                yieldsOnCore.get() shouldBe 0 // precondition: the loop ran on extra threads only
                val viaGlobal = d.stats().globalPops - globalBefore
                println("2,000 yields on extra threads: $viaGlobal tasks taken from the global queue")
                (viaGlobal < 100) shouldBe true // one for the launch; 2,000 before the change
            } finally {
                gate.countDown()
            }
        }
    }

    test("after shutdown, a surplus extra worker still runs every coroutine in its yield queue") {
        // The global queue refuses offers after shutdown: a hand-over that put the refused
        // coroutine back at the newest end, before every task, left the oldest one behind for
        // ever (found in review). The core worker comes back busy with one long task, so the
        // extra stays surplus while it loops over its yield queue.
        StealingDispatcher(1, "yield-extra-shutdown", StealingOptions(starvationInterval = Duration.ZERO)).use { d ->
            val scope = CoroutineScope(d)
            val stop = AtomicBoolean()
            val gate = CountDownLatch(1)
            val onExtra = CountDownLatch(2)
            val steps = List(2) { AtomicInteger() }
            try {
                blockWorkers(scope, 1, gate) {
                    while (!stop.get()) Thread.onSpinWait() // back, and busy: the extra is surplus
                }
                steps.forEach { step ->
                    scope.launch { // the core worker is blocked: these run on an extra thread
                        var counted = false
                        while (!stop.get()) {
                            if (!counted && (Thread.currentThread() as Worker).isExtra) {
                                onExtra.countDown()
                                counted = true
                            }
                            step.incrementAndGet()
                            yield()
                        }
                    }
                }
                onExtra.await(10, TimeUnit.SECONDS) shouldBe true
                d.executor.shutdown() // intake closes; running coroutines go on
                gate.countDown()
                val atRelease = steps.map { it.get() }
                steps.forEachIndexed { i, step ->
                    withClue("loop $i keeps running") { eventually(10_000) { step.get() > atRelease[i] + 1_000 } shouldBe true }
                }
            } finally {
                gate.countDown()
                stop.set(true)
            }
        }
    }

    test("an extra worker takes no half of another worker's deque onto its own") {
        // A deque full of stolen tasks would keep an extra thread from going idle when it is
        // surplus. Both core workers end up blocked, one with 400 tasks queued on its deque: the
        // extra threads take them one steal at a time, so a task run on an extra thread never
        // finds tasks waiting on that thread's own deque.
        StealingDispatcher(2, "extra-no-half", StealingOptions(starvationInterval = Duration.ZERO)).use { d ->
            val scope = CoroutineScope(d)
            val gate = CountDownLatch(1)
            val done = CountDownLatch(400)
            val onExtra = AtomicInteger()
            val behindOnExtra = AtomicInteger()
            val task = Runnable {
                val w = Thread.currentThread() as Worker
                if (w.isExtra) {
                    onExtra.incrementAndGet()
                    if (w.deque.size() > 0) behindOnExtra.incrementAndGet() // owner's own read
                }
                val end = System.nanoTime() + 50_000
                while (System.nanoTime() < end) Thread.onSpinWait()
                done.countDown()
            }
            try {
                blockWorkers(scope, 1, gate)
                val pusherBlocked = CountDownLatch(1)
                scope.launch { // on the other core worker (or an extra standing in for it)
                    repeat(400) { d.executor.execute(task) } // from a worker: onto its own deque
                    blocking { pusherBlocked.countDown(); gate.await(20, TimeUnit.SECONDS) }
                }
                pusherBlocked.await(10, TimeUnit.SECONDS) shouldBe true
                done.await(20, TimeUnit.SECONDS) shouldBe true
                println("of 400 tasks, ${onExtra.get()} ran on extra threads, ${behindOnExtra.get()} of them with tasks on that thread's deque")
                (onExtra.get() > 0) shouldBe true // precondition: extra threads took some
                behindOnExtra.get() shouldBe 0
            } finally {
                gate.countDown()
            }
        }
    }

    test("an extra worker hands its yield queue over and goes idle when the blocked workers return") {
        StealingDispatcher(2, "yield-extra", StealingOptions(starvationInterval = Duration.ZERO)).use { d ->
            val scope = CoroutineScope(d)
            val stop = AtomicBoolean()
            val gate = CountDownLatch(1)
            val onExtra = CountDownLatch(1)
            suspend fun loop() {
                while (!stop.get()) {
                    if ((Thread.currentThread() as Worker).isExtra) onExtra.countDown()
                    yield()
                }
            }
            try {
                blockWorkers(scope, 2, gate) { loop() }
                scope.launch { loop() } // both core workers are blocked: this runs on an extra thread
                onExtra.await(10, TimeUnit.SECONDS) shouldBe true
                gate.countDown()
                // Three yield loops, parallelism 2: once the core workers are back, the extra
                // thread must hand its loop over to them (through the global queue) and go idle.
                eventually(10_000) { d.stats().let { it.threads - it.idleThreads <= 2 } } shouldBe true
            } finally {
                gate.countDown()
                stop.set(true)
            }
        }
    }

    test("shutdownNow cancels a coroutine waiting in a yield queue at once, while its worker is still busy") {
        // No thread injection: an extra thread started for the waiting worker would resume it.
        val d = StealingDispatcher(1, "yield-now", StealingOptions(starvationInterval = Duration.ZERO))
        val started = CountDownLatch(1)
        val release = CountDownLatch(1)
        val resumed = AtomicBoolean()
        lateinit var job: Job
        d.executor.execute {
            job = CoroutineScope(d).launch(start = CoroutineStart.UNDISPATCHED) {
                yield()
                resumed.set(true)
            }
            started.countDown()
            release.await()
        }
        try {
            started.await(10, TimeUnit.SECONDS) shouldBe true
            // Coroutines are cancelled, not handed back (as kotlinx's executor dispatchers do).
            d.executor.shutdownNow() shouldBe emptyList()
            job.isCancelled shouldBe true // taken from the yield queue by shutdownNow itself
        } finally {
            release.countDown()
        }
        d.executor.awaitTermination(10, TimeUnit.SECONDS) shouldBe true
        resumed.get() shouldBe false
    }
})

/**
 * Blocks [workers] workers of [scope]'s pool in `blocking {}` until [gate] opens (at most 20 s),
 * then each goes on with [after]; returns once all of them are blocked. On a pool with thread
 * injection off and nothing else running, these are its core workers.
 */
private fun blockWorkers(scope: CoroutineScope, workers: Int, gate: CountDownLatch, after: suspend () -> Unit = {}) {
    val blockedIn = CountDownLatch(workers)
    repeat(workers) {
        scope.launch {
            blocking { blockedIn.countDown(); gate.await(20, TimeUnit.SECONDS) }
            after()
        }
    }
    blockedIn.await(10, TimeUnit.SECONDS) shouldBe true
}
