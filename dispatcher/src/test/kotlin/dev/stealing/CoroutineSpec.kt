package dev.stealing

import dev.stealing.internal.worker.Worker
import dev.stealing.testsupport.eventually
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.string.shouldStartWith
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.Job
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import kotlinx.coroutines.yield
import java.time.Duration
import java.util.Collections
import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicBoolean
import java.util.concurrent.atomic.AtomicInteger
import java.util.concurrent.atomic.AtomicIntegerArray

class CoroutineSpec : FunSpec({
    test("withContext(StealingDispatcher) runs on the shared pool's workers") {
        val name = runBlocking { withContext(StealingDispatcher) { Thread.currentThread().name } }
        name shouldStartWith "StealingDispatcher.Default-worker-"
        StealingDispatcher.toString() shouldBe "StealingDispatcher.Default"
    }

    test("an isolated pool used with `use` and withContext") {
        val result = StealingDispatcher(parallelism = 4, name = "iso").use { pool ->
            runBlocking { withContext(pool) { Thread.currentThread().name to 42 } }
        }
        result.first shouldStartWith "iso-worker-"
        result.second shouldBe 42
    }

    test("launch and async fan-out with delay and yield produce the same results as on Default") {
        suspend fun work(scope: CoroutineScope): List<Int> = (1..200).map { i ->
            scope.async {
                if (i % 7 == 0) delay(1)
                if (i % 3 == 0) yield()
                i * i
            }
        }.awaitAll()
        val expected = runBlocking { withContext(Dispatchers.Default) { coroutineScope { work(this) } } }
        StealingDispatcher(3, "fanout").use { d ->
            runBlocking { withContext(d) { coroutineScope { work(this) } } } shouldContainExactly expected
        }
    }

    test("yield lets other coroutines run, even on a single worker") {
        StealingDispatcher(1, "yield").use { d ->
            val order = Collections.synchronizedList(ArrayList<String>())
            runBlocking {
                withContext(d) {
                    val a = launch { repeat(3) { order += "a$it"; yield() } }
                    val b = launch { repeat(3) { order += "b$it"; yield() } }
                    a.join(); b.join()
                }
            }
            order.size shouldBe 6
            // yield() queues behind the other coroutine: the two strictly alternate.
            for (i in 1 until order.size) (order[i][0] != order[i - 1][0]) shouldBe true
        }
    }

    test("a long yield loop does not starve work queued from outside") {
        StealingDispatcher(1, "no-starve").use { d ->
            val outsideRan = CountDownLatch(1)
            runBlocking {
                val spinner = launch(d) { while (outsideRan.count > 0) yield() }
                d.executor.execute { outsideRan.countDown() }
                spinner.join()
            }
        }
    }

    test("a local LIFO stream does not starve work queued from outside or older local work") {
        StealingDispatcher(1, "lifo-stream").use { d ->
            val outsideRan = CountDownLatch(1)
            val oldLocalRan = CountDownLatch(1)
            d.executor.execute {
                d.executor.execute { oldLocalRan.countDown() } // at the bottom of the deque
                // Keep pushing a new task on top of it forever, until both others ran.
                fun chain(): Runnable = Runnable {
                    if (outsideRan.count > 0 || oldLocalRan.count > 0) d.executor.execute(chain())
                }
                d.executor.execute(chain())
            }
            d.executor.execute { outsideRan.countDown() }
            outsideRan.await(10, java.util.concurrent.TimeUnit.SECONDS) shouldBe true
            oldLocalRan.await(10, java.util.concurrent.TimeUnit.SECONDS) shouldBe true
        }
    }

    test("a coroutine that yields on a busy worker is taken by an idle worker") {
        // No thread injection: only the idle core worker can run the yielded coroutine.
        StealingDispatcher(2, "yield-steal", StealingOptions(starvationInterval = Duration.ZERO)).use { d ->
            val resumed = CountDownLatch(1)
            val holderWaited = AtomicBoolean()
            val holder = CountDownLatch(1)
            d.executor.execute {
                // Runs on a worker: the coroutine goes onto this worker's yield queue, and this
                // task then holds the worker until the coroutine has resumed elsewhere.
                CoroutineScope(d).launch(start = CoroutineStart.UNDISPATCHED) {
                    yield()
                    resumed.countDown()
                }
                holderWaited.set(resumed.await(10, TimeUnit.SECONDS))
                holder.countDown()
            }
            holder.await(20, TimeUnit.SECONDS) shouldBe true
            holderWaited.get() shouldBe true
        }
    }

    test("a yield loop and a local LIFO stream on one worker do not starve each other or older local work") {
        StealingDispatcher(1, "yield-lifo").use { d ->
            val yielderDone = CountDownLatch(1)
            val oldLocalRan = CountDownLatch(1)
            val giveUp = AtomicBoolean() // ends the stream after a failure, so close() returns
            d.executor.execute {
                CoroutineScope(d).launch(start = CoroutineStart.UNDISPATCHED) {
                    repeat(3) { yield() } // each time to the back of the yield queue
                    yielderDone.countDown()
                }
                d.executor.execute { oldLocalRan.countDown() } // at the bottom of the deque
                fun chain(): Runnable = Runnable {
                    if ((yielderDone.count > 0 || oldLocalRan.count > 0) && !giveUp.get()) d.executor.execute(chain())
                }
                d.executor.execute(chain()) // the deque never runs empty until both ran
            }
            try {
                yielderDone.await(10, TimeUnit.SECONDS) shouldBe true
                oldLocalRan.await(10, TimeUnit.SECONDS) shouldBe true
            } finally {
                giveUp.set(true)
            }
        }
    }

    test("yield is fair across workers: a worker that took one yielding coroutine takes half of a busier worker's") {
        // One worker queues 100 coroutines that each yield 20 times (each on its first yield, in
        // that worker's yield queue), then stays busy until all have ended, so the other worker
        // runs them all. That one is held until all 100 are queued. Without balancing it would
        // steal one coroutine at a time and run it alone to its end (1 started when the first
        // ends); with it, it takes half of the other worker's queue at once (about 50 started).
        // No thread injection: the busy workers are held on purpose.
        StealingDispatcher(2, "yield-balance", StealingOptions(starvationInterval = Duration.ZERO)).use { d ->
            val progress = AtomicIntegerArray(100)
            val startedAtFirstEnd = AtomicInteger(-1)
            val allEnded = CountDownLatch(100)
            val otherHeld = CountDownLatch(1)
            val allQueued = CountDownLatch(1)
            val release = CountDownLatch(1)
            try {
                d.executor.execute { otherHeld.countDown(); allQueued.await(20, TimeUnit.SECONDS) }
                otherHeld.await(10, TimeUnit.SECONDS) shouldBe true
                d.executor.execute { // the other worker: the first is held
                    repeat(100) { c ->
                        CoroutineScope(d).launch(start = CoroutineStart.UNDISPATCHED) {
                            repeat(20) { yield(); progress.incrementAndGet(c) }
                            startedAtFirstEnd.compareAndSet(-1, (0 until 100).count { progress.get(it) > 0 })
                            allEnded.countDown()
                        }
                    }
                    allQueued.countDown()
                    release.await(20, TimeUnit.SECONDS)
                }
                allEnded.await(20, TimeUnit.SECONDS) shouldBe true
            } finally {
                allQueued.countDown()
                release.countDown()
            }
            println("coroutines started when the first of 100 ended: ${startedAtFirstEnd.get()}")
            (startedAtFirstEnd.get() >= 40) shouldBe true
        }
    }

    test("a coroutine that yielded on a worker stuck in a task is taken by a worker looping on its own yields") {
        // No starvation monitor: only the other worker's balancing can move the coroutine.
        StealingDispatcher(2, "yield-stuck", StealingOptions(starvationInterval = Duration.ZERO)).use { d ->
            val scope = CoroutineScope(d)
            val aDone = AtomicBoolean()
            val bOnOtherWorker = CountDownLatch(1)
            val held = CountDownLatch(1)
            val giveUp = AtomicBoolean()
            d.executor.execute {
                val me = Thread.currentThread()
                scope.launch { // B, taken by the other worker: yields in a loop until A has run
                    if (Thread.currentThread() !== me) bOnOtherWorker.countDown()
                    while (!aDone.get() && !giveUp.get()) yield()
                }
                if (bOnOtherWorker.await(10, TimeUnit.SECONDS)) {
                    scope.launch(start = CoroutineStart.UNDISPATCHED) { yield(); aDone.set(true) } // A: in this worker's yield queue
                    val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10)
                    while (!aDone.get() && System.nanoTime() < deadline) Thread.onSpinWait() // stuck in this task
                }
                held.countDown()
            }
            try {
                held.await(30, TimeUnit.SECONDS) shouldBe true
                bOnOtherWorker.count shouldBe 0L
                aDone.get() shouldBe true
            } finally {
                giveUp.set(true)
            }
        }
    }

    test("a yielded coroutine is not held back by a long stream of outside work") {
        StealingDispatcher(1, "yield-stream").use { d ->
            val outsideDone = AtomicInteger()
            val gate = CountDownLatch(1)
            val doneWhenResumed = AtomicInteger(-1)
            val resumed = CountDownLatch(1)
            d.executor.execute {
                gate.await(10, TimeUnit.SECONDS)
                CoroutineScope(d).launch(start = CoroutineStart.UNDISPATCHED) {
                    yield()
                    doneWhenResumed.set(outsideDone.get())
                    resumed.countDown()
                }
            }
            repeat(100_000) { d.executor.execute { outsideDone.incrementAndGet() } } // queued behind the gate
            gate.countDown()
            resumed.await(30, TimeUnit.SECONDS) shouldBe true
            println("outside tasks run before the yielded coroutine resumed: ${doneWhenResumed.get()} of 100,000")
            (doneWhenResumed.get() < 1_000) shouldBe true // a turn at least every other periodic look (61 tasks)
        }
    }

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

    test("cancellation propagates as on Default") {
        StealingDispatcher(2, "cancel").use { d ->
            val started = CountDownLatch(1)
            val cancelledSeen = AtomicInteger()
            runBlocking {
                val job = launch(d) {
                    try {
                        started.countDown()
                        while (true) yield()
                    } catch (e: CancellationException) {
                        cancelledSeen.incrementAndGet()
                        throw e
                    }
                }
                started.await()
                job.cancel()
                job.join()
                job.isCancelled shouldBe true
            }
            cancelledSeen.get() shouldBe 1
        }
    }

    test("an exception in a child fails the parent scope and cancels siblings, as on Default") {
        StealingDispatcher(2, "failure").use { d ->
            val siblingCancelled = AtomicInteger()
            val siblingStarted = CountDownLatch(1)
            val e = shouldThrow<IllegalStateException> {
                runBlocking(d) {
                    launch {
                        try {
                            siblingStarted.countDown()
                            delay(10_000)
                        } catch (c: CancellationException) {
                            siblingCancelled.incrementAndGet(); throw c
                        }
                    }
                    async<Int> { siblingStarted.await(); throw IllegalStateException("child failed") }.await()
                }
            }
            e.message shouldContain "child failed"
            siblingCancelled.get() shouldBe 1
        }
    }

    test("limitedParallelism follows the kotlinx contract") {
        StealingDispatcher(4, "limited").use { d ->
            shouldThrow<IllegalArgumentException> { d.limitedParallelism(0) }
            val view = d.limitedParallelism(1)
            val active = AtomicInteger()
            val maxActive = AtomicInteger()
            runBlocking {
                List(100) {
                    launch(view) {
                        val now = active.incrementAndGet()
                        maxActive.accumulateAndGet(now) { a, b -> maxOf(a, b) }
                        Thread.sleep(0, 1000)
                        active.decrementAndGet()
                    }
                }.forEach { it.join() }
            }
            maxActive.get() shouldBe 1
        }
    }

    test("toString shows name and size; stats count the work") {
        StealingDispatcher(2, "named").use { d ->
            runBlocking { withContext(d) { coroutineScope { repeat(100) { launch { } } } } }
            d.toString() shouldStartWith "named[parallelism = 2"
            val s = d.stats()
            (s.executed >= 101) shouldBe true
            s.localPops + s.globalPops + s.steals shouldBe s.executed
        }
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
