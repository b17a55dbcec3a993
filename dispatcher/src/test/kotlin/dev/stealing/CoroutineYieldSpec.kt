package dev.stealing

import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.CoroutineStart
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

/**
 * `yield` and the order in which a worker takes work: a yielding coroutine, a local LIFO
 * stream and work queued from outside do not starve each other, and idle workers take yielded
 * coroutines from busy or stuck ones (docs/design.md, the order a worker looks for work).
 */
class CoroutineYieldSpec : FunSpec({
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
})
