package dev.stealing.internal.idle

import dev.stealing.StealingDispatcher
import dev.stealing.StealingOptions
import dev.stealing.internal.pool.WorkStealingPool
import dev.stealing.internal.worker.Worker
import dev.stealing.internal.worker.runBlockingRegion
import dev.stealing.testsupport.eventually
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import java.lang.invoke.MethodHandles
import java.lang.invoke.VarHandle
import java.time.Duration
import java.time.temporal.ChronoUnit
import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicReference

/** Raw access to the pool's ctl word, to stand in for a thread paused between two of its ctl updates. */
private val CTL_HANDLE: VarHandle = MethodHandles.privateLookupIn(IdleControl::class.java, MethodHandles.lookup())
    .findVarHandle(IdleControl::class.java, "ctl", Long::class.javaPrimitiveType)

private fun addCtl(pool: WorkStealingPool, delta: Long) {
    CTL_HANDLE.getAndAdd(pool.idle, delta)
}

private fun describe(c: Long) =
    "ctl: top=${Ctl.top(c)} searching=${Ctl.searching(c)} live=${Ctl.live(c)} active=${Ctl.active(c)} version=${Ctl.version(c)}"

private fun stopQuietly(d: StealingDispatcher) {
    d.executor.shutdownNow()
    d.executor.awaitTermination(5, TimeUnit.SECONDS)
}

/**
 * Regression tests from the second review of the parking protocol after thread injection
 * (docs/parking.md). Each failed, or hung, before its fix; F1 and F3 stand in for a thread
 * paused at an exact point by doing its step from the test thread.
 */
class ParkingInjectionRacesSpec : FunSpec({

    test("review F1: a presumption that lands after the presumed task ended underflows ACTIVE: no later task ever runs") {
        // Monitor disabled; the test thread performs the monitor's look() and its (late) CAS.
        val d = StealingDispatcher(1, "presume-late", StealingOptions(spinRounds = 0, starvationInterval = Duration.ZERO))
        val pool = d.pool
        try {
            val started = CountDownLatch(1)
            val release = CountDownLatch(1)
            val wRef = AtomicReference<Worker>()
            d.executor.execute { // A: waits (unmarked) on the only worker
                wRef.set(Thread.currentThread() as Worker)
                started.countDown()
                release.await()
            }
            started.await(5, TimeUnit.SECONDS) shouldBe true
            val w = wRef.get()
            val bRan = CountDownLatch(1)
            d.executor.execute { bRan.countDown() } // B queued: ACTIVE == parallelism, nobody woken

            // StarvationMonitor.look(), on two ticks: w is inTask, executed unchanged, work waiting,
            // w WAITING and NOT_BLOCKED -> stalled -> it is about to call presumeBlocked(w) (line 83).
            eventually(5_000) { w.state == Thread.State.WAITING } shouldBe true
            w.inTask shouldBe true
            pool.hasVisibleWork() shouldBe true
            w.idleNode.blockState shouldBe BlockState.NOT_BLOCKED

            // The monitor is descheduled here. A ends (runTask line 137 sees NOT_BLOCKED), w runs B,
            // finds nothing and parks: pushIdle takes ACTIVE 1 -> 0.
            release.countDown()
            bRan.await(5, TimeUnit.SECONDS) shouldBe true
            eventually(5_000) { w.idleNode.parkState() == ParkState.IDLE && w.state == Thread.State.WAITING } shouldBe true

            // The monitor resumes. Before the fix its CAS NOT_BLOCKED -> PRESUMED succeeded and
            // beginBlocking subtracted a second time; now an idle worker is INACTIVE and refuses it.
            pool.idle.presumeBlocked(w.idleNode) shouldBe false
            Ctl.active(pool.idle.ctl()) shouldBe 0

            val cRan = CountDownLatch(1)
            d.executor.execute { cRan.countDown() } // signalWork reads ACTIVE = 4095 >= parallelism: wakes nobody
            withClue(describe(pool.idle.ctl())) {
                cRan.await(3, TimeUnit.SECONDS) shouldBe true
            }
        } finally {
            stopQuietly(d)
        }
    }

    test("review F2: an extra that surplus-parks with forked work and retires: its slot is reused and the work is lost") {
        val d = StealingDispatcher(
            1, "retire-lost",
            StealingOptions(spinRounds = 0, starvationInterval = Duration.ZERO, keepAlive = Duration.ofMillis(100), maxThreads = 2),
        )
        val ex = d.executor
        val aBlock1 = CountDownLatch(1)
        val aResumed = CountDownLatch(1)
        val aHold = CountDownLatch(1)
        val aBlock2 = CountDownLatch(1)
        val xRan = CountDownLatch(1)
        try {
            ex.execute { // A, on core worker 0
                runBlockingRegion { aBlock1.await() } // marked: ACTIVE 1 -> 0
                aResumed.countDown()
                aHold.await() // unmarked: worker 0 counts as active (a long computation would do the same)
                runBlockingRegion { aBlock2.await() } // marked: ACTIVE 1 -> 0, re-scan sees X, signalWork
            }
            eventually(5_000) { d.stats().blockedThreads == 1 } shouldBe true
            ex.execute { // B: worker 0 is blocked, so signalWork starts extra E in slot 1
                ex.execute { xRan.countDown() } // X: pushed on E's deque; ACTIVE = 1 >= parallelism, nobody woken
                aBlock1.countDown()
                aResumed.await() // worker 0 is active again: ACTIVE = 2 > parallelism
            }
            // E leaves B and, ACTIVE > parallelism, surplus-parks before popping its own deque (Worker.kt:171),
            // then its keep-alive runs out and it retires with X still queued in its deque.
            eventually(5_000) { d.stats().retiredThreads == 1L } shouldBe true
            // Before the fix E retired holding X; now it surplus-parks only with an empty deque.
            withClue("X ran before its worker retired") { xRan.await(5, TimeUnit.SECONDS) shouldBe true }
            aHold.countDown() // (before the fix: A's second blocking region reused E's slot, dropping X)
        } finally {
            aBlock1.countDown(); aHold.countDown(); aBlock2.countDown()
            d.close() // (before the fix: quiescent shutdown completed although X never ran)
        }
        withClue("an accepted task ran before close() returned") { xRan.count shouldBe 0L }
    }

    test("review F3 (control): an unmarked waiter is detected after leaving a blocking region") {
        maskedMonitorScenario(transientPop = false) shouldBe true
    }

    test("review F3: ACTIVE 0 -> 1 hidden by a popper's transient count: the monitor stays parked through starvation") {
        maskedMonitorScenario(transientPop = true) shouldBe true
    }

    test("fork skip: a presumption whose re-scan missed an unsignalled fork: the monitor's next look wakes a worker for it") {
        // The backstop (docs/parking.md, "Forks onto a non-empty deque"). It was added when forks
        // were not fenced, and a presumption's re-scan on the monitor's thread could miss one; a
        // fenced fork and the presumption are now a Dekker pair. The test thread stands in for a
        // presumption whose re-scan missed the forks: it takes the presumption first (the monitor
        // needs two stalled looks, a second or more) and skips the re-scan.
        val d = StealingDispatcher(1, "fork-missed", StealingOptions(spinRounds = 0, starvationInterval = Duration.ofMillis(500)))
        val pool = d.pool
        val forked = CountDownLatch(1)
        val release = CountDownLatch(1)
        val ran = CountDownLatch(2)
        val wRef = AtomicReference<Worker>()
        try {
            d.executor.execute { // A, on the only worker
                val w = Thread.currentThread() as Worker
                wRef.set(w)
                w.pushFork { ran.countDown() } // onto an empty deque: signals (ACTIVE == parallelism: nobody to wake)
                w.pushFork { ran.countDown() } // an older task is queued below it: no read of ctl
                forked.countDown()
                release.await() // unmarked: waits until the test ends
            }
            forked.await(5, TimeUnit.SECONDS) shouldBe true
            val w = wRef.get()
            withClue("the monitor presumed the worker first") {
                w.idleNode.casBlockState(BlockState.NOT_BLOCKED, BlockState.PRESUMED) shouldBe true
            }
            addCtl(pool, -Ctl.ACTIVE_ONE) // presumeBlocked's uncount, without its re-scan and signal
            // Before the backstop nobody woke or started a worker: the monitor skips a presumed
            // worker, and the forks waited in its deque until its task ended.
            withClue(describe(pool.idle.ctl())) {
                ran.await(5, TimeUnit.SECONDS) shouldBe true
            }
        } finally {
            release.countDown()
            stopQuietly(d)
        }
    }

    test("review F4: a keepAlive beyond Long.MAX_VALUE ns kills the first worker to park, leaving its node on the stack") {
        val d = StealingDispatcher(1, "forever", StealingOptions(spinRounds = 0, keepAlive = ChronoUnit.FOREVER.duration))
        try {
            val first = CountDownLatch(1)
            d.executor.execute { first.countDown() }
            first.await(5, TimeUnit.SECONDS) shouldBe true
            Thread.sleep(200) // worker 0 parks: sleep() calls keepAlive.toNanos() -> ArithmeticException
            val second = CountDownLatch(1)
            d.executor.execute { second.countDown() }
            withClue(describe(d.pool.idle.ctl())) {
                second.await(3, TimeUnit.SECONDS) shouldBe true
            }
        } finally {
            stopQuietly(d)
        }
    }
})

private fun pool(d: StealingDispatcher) = d.pool

/**
 * Worker 0 leaves a marked blocking region while a producer (B's signalWork) sits between its pop of a
 * stale node (wakeOrStartWorker: ACTIVE + 1) and its undo; then it waits, unmarked, for B.
 * Returns whether B ran (i.e. the starvation monitor detected the stuck worker and injected a thread).
 */
private fun maskedMonitorScenario(transientPop: Boolean): Boolean {
    val d = StealingDispatcher(1, "masked-$transientPop", StealingOptions(spinRounds = 0, starvationInterval = Duration.ofMillis(20)))
    val pool = d.pool
    pool.monitor!!.idleLookNanos = Long.MAX_VALUE // only onPoolActive() may wake it: what this test is about
    val gate = CountDownLatch(1)
    val leftBlocking = CountDownLatch(1)
    val bRan = CountDownLatch(1)
    try {
        d.executor.execute {
            runBlockingRegion { gate.await() } // marked: ACTIVE 1 -> 0
            leftBlocking.countDown()
            bRan.await(10, TimeUnit.SECONDS) // unmarked: stuck until B runs; detection must compensate
        }
        // Nothing active, nothing queued: the monitor parks without a time limit (WAITING).
        eventually(5_000) { d.stats().blockedThreads == 1 && pool.monitor.state == Thread.State.WAITING } shouldBe true
        // B's producer: offer (P1), then signalWork reads ACTIVE 0 < 1 and pops the top node, a stale
        // or retired one, adding ACTIVE + 1 and SEARCHING + 1 before claiming it ...
        pool.global.offer(Runnable { bRan.countDown() }) shouldBe true
        if (transientPop) addCtl(pool, Ctl.ACTIVE_ONE + Ctl.SEARCHING_ONE)
        // ... meanwhile worker 0 leaves its blocking region: endBlocking's add sees ACTIVE 1 before it
        // (the popper's count), so activated() does not call monitor.onPoolActive() ...
        gate.countDown()
        leftBlocking.await(5, TimeUnit.SECONDS) shouldBe true
        // ... the claim fails (stale node): undo, loop, read ACTIVE 1 >= parallelism, return.
        if (transientPop) addCtl(pool, -Ctl.ACTIVE_ONE - Ctl.SEARCHING_ONE)
        pool.idle.signalWork()
        return bRan.await(3, TimeUnit.SECONDS)
    } finally {
        bRan.countDown()
        stopQuietly(d)
    }
}
