package dev.stealing.internal.worker

import dev.stealing.StealingDispatcher
import dev.stealing.StealingOptions
import dev.stealing.internal.idle.Ctl
import dev.stealing.internal.idle.FaultStep
import dev.stealing.internal.idle.ParkState
import dev.stealing.internal.idle.PendingPop
import dev.stealing.testsupport.InjectedError
import dev.stealing.testsupport.armOnWorkers
import dev.stealing.testsupport.describeCtl
import dev.stealing.testsupport.eventually
import dev.stealing.testsupport.stopWithoutHook
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit
import java.util.function.IntConsumer

/**
 * An Error in a worker's own loop, outside any task, or in a look of its idle transition (from
 * the idle push until it runs again) is reported to the pool's failure handler, and the worker
 * goes on serving its queues on the same thread (docs/parking.md, "Errors in the signalling
 * path"). Each test failed (or hung) before its fix.
 */
class WorkerLoopErrorSpec : FunSpec({
    test("an Error in a worker's own loop (the wake-up of its recruit cut short) is reported, and the worker goes on serving its deque") {
        val reported = java.util.concurrent.CopyOnWriteArrayList<String>()
        val d = StealingDispatcher(
            2, "loop-error",
            StealingOptions(spinRounds = 0, exceptionHandler = { task, e -> reported += "$task: $e" }),
        )
        try {
            // Once, on whichever worker pops another first: a last searcher recruiting a helper
            // for the work it still sees (IdleControl.endSearch), called from the worker's loop.
            val fired = java.util.concurrent.atomic.AtomicBoolean()
            d.pool.idle.faultHook = IntConsumer { step ->
                if (step == PendingPop.CLAIM && Thread.currentThread() is Worker && fired.compareAndSet(false, true)) throw InjectedError()
            }
            val bursts = java.util.concurrent.atomic.AtomicInteger()
            while (!fired.get() && bursts.incrementAndGet() <= 10_000) {
                val both = CountDownLatch(2)
                repeat(2) { d.executor.execute { both.countDown() } }
                both.await(10, TimeUnit.SECONDS) shouldBe true
                eventually(10_000) { Ctl.active(d.pool.idle.ctl()) == 0 } shouldBe true // both parked again
            }
            fired.get() shouldBe true
            // Before, the Error ended the worker's thread, and nothing took its place.
            eventually(10_000) { reported.any { it.contains("the loop of") && it.contains("InjectedError") } } shouldBe true
            for (i in 0 until 2) withClue("worker $i") { d.pool.workers[i].isAlive shouldBe true }
            // Each worker forks onto its own deque and waits for the forks: they run.
            val forks = CountDownLatch(200)
            val parents = CountDownLatch(2)
            repeat(2) {
                d.executor.execute {
                    repeat(100) { (Thread.currentThread() as Worker).pushFork { forks.countDown() } }
                    parents.countDown()
                }
            }
            parents.await(10, TimeUnit.SECONDS) shouldBe true
            forks.await(10, TimeUnit.SECONDS) shouldBe true
        } finally {
            stopWithoutHook(d)
        }
    }

    // An Error inside an idle transition (from the idle push until the worker runs again): before,
    // it escaped with the node pushed and uncounted, the worker exited without repairing it, and
    // its slot stayed taken by a dead thread: nothing started in its place, its keyed work and
    // timers were stranded, and a one-worker pool ran nothing more.
    for ((step, what) in listOf(
        FaultStep.RESCAN to "the re-scan of the queues while going idle",
        FaultStep.OWN_WORK to "the look at its own keyed work and timers while going idle",
        -FaultStep.OWN_WORK to "the look at its own keyed work after keyed work unparked it",
    )) {
        test("an Error in $what: the worker wakes itself, reports it and goes on") {
            val reported = java.util.concurrent.CopyOnWriteArrayList<String>()
            val d = StealingDispatcher(
                1, "idle-error-$step",
                StealingOptions(spinRounds = 0, exceptionHandler = { task, e -> reported += "$task: $e" }),
            )
            try {
                val first = CountDownLatch(1)
                d.executor.execute { first.countDown() }
                first.await(10, TimeUnit.SECONDS) shouldBe true
                val worker = d.pool.workers[0]
                if (step > 0) {
                    armOnWorkers(d.pool.idle, step) // its next idle transition throws at the step
                    d.executor.execute { }
                } else {
                    // Parked (its re-scan is over): the keyed offer unparks it without claiming it,
                    // and its look at its own work throws.
                    eventually(10_000) { worker.state == Thread.State.WAITING && worker.idleNode.parkState() == ParkState.IDLE } shouldBe true
                    armOnWorkers(d.pool.idle, -step)
                    d.affinityExecutor("k").execute { }
                }
                eventually(10_000) { reported.any { it.contains("the loop of") && it.contains("InjectedError") } } shouldBe true
                val later = CountDownLatch(2)
                d.executor.execute { later.countDown() }
                d.affinityExecutor("k").execute { later.countDown() }
                withClue(describeCtl(d.pool.idle.ctl())) { later.await(10, TimeUnit.SECONDS) shouldBe true }
                (d.pool.workers[0] === worker && worker.isAlive) shouldBe true
                withClue("the worker idle again, counted once: " + describeCtl(d.pool.idle.ctl())) {
                    eventually(10_000) {
                        val c = d.pool.idle.ctl()
                        Ctl.live(c) == 1 && Ctl.active(c) == 0 && Ctl.searching(c) == 0 && Ctl.top(c) == 1
                    } shouldBe true
                }
            } finally {
                stopWithoutHook(d)
            }
        }
    }

    test("an Error in the quiescence check of the last worker to go idle: reported, and the pool still terminates") {
        val reported = java.util.concurrent.CopyOnWriteArrayList<String>()
        val d = StealingDispatcher(1, "quiesce-error", StealingOptions(spinRounds = 0, exceptionHandler = { task, e -> reported += "$task: $e" }))
        try {
            val ran = CountDownLatch(1)
            d.executor.execute { ran.countDown() }
            ran.await(10, TimeUnit.SECONDS) shouldBe true
            armOnWorkers(d.pool.idle, FaultStep.QUIESCE)
            val slow = CountDownLatch(1)
            d.executor.execute { slow.await(10, TimeUnit.SECONDS) } // the worker is in a task when shutdown() comes
            d.executor.shutdown()
            slow.countDown()
            d.executor.awaitTermination(10, TimeUnit.SECONDS) shouldBe true
            // Before, the Error left the worker's thread for its uncaught-exception handler, not the pool's.
            reported.any { it.contains("the loop of") && it.contains("InjectedError") } shouldBe true
        } finally {
            stopWithoutHook(d)
        }
    }
})
