package dev.stealing.internal.idle

import dev.stealing.StealingDispatcher
import dev.stealing.StealingOptions
import dev.stealing.internal.queue.FairRotation
import dev.stealing.internal.queue.MpmcTaskQueue
import dev.stealing.internal.queue.WorkDeque
import dev.stealing.internal.worker.Worker
import dev.stealing.internal.worker.runBlockingRegion
import dev.stealing.testsupport.InjectedError
import dev.stealing.testsupport.armOnce
import dev.stealing.testsupport.describeCtl
import dev.stealing.testsupport.eventually
import dev.stealing.testsupport.parkedPool
import dev.stealing.testsupport.runInFreshJvm
import dev.stealing.testsupport.runWithin
import dev.stealing.testsupport.stopWithoutHook
import dev.stealing.testsupport.stressMultiplier
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import java.lang.invoke.MethodHandles
import java.lang.invoke.VarHandle
import java.time.Duration
import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicReference

/** Raw access to a pool's ctl word and a deque's hiding count, to stand in for what an Error left behind. */
private val CTL: VarHandle = MethodHandles.privateLookupIn(IdleControl::class.java, MethodHandles.lookup())
    .findVarHandle(IdleControl::class.java, "ctl", Long::class.javaPrimitiveType)
private val HIDINGS: VarHandle = MethodHandles.privateLookupIn(WorkDeque::class.java, MethodHandles.lookup())
    .findVarHandle(WorkDeque::class.java, "hidings", Int::class.javaPrimitiveType)

/**
 * An Error in the signalling path never wedges the pool (docs/parking.md, "Errors in the
 * signalling path"). Each test throws an Error at one step of a wake-up, a start, a blocking
 * region or a stop, through the pool's test hook or by leaving the state such an Error leaves,
 * and checks that the pool repairs it; each failed (or hung) before its fix.
 */
class SignalErrorSpec : FunSpec({

    for ((step, name) in listOf(PendingPop.CLAIM to "before its claim", PendingPop.UNPARK to "between its claim and the unpark")) {
        test("a wake-up cut short $name: the monitor finishes it, the task runs and the counts come right") {
            val d = parkedPool("cut-$step")
            try {
                armOnce(d.pool.idle, step)
                val ran = CountDownLatch(1)
                shouldThrow<InjectedError> { d.executor.execute { ran.countDown() } } // queued, then its wake-up failed
                // Before the fix the node stayed popped and counted as a searcher that never
                // came: every later signal saw it and woke nobody, and the monitor trusted ctl.
                withClue(describeCtl(d.pool.idle.ctl())) { ran.await(10, TimeUnit.SECONDS) shouldBe true }
                val later = CountDownLatch(1)
                d.executor.execute { later.countDown() }
                later.await(10, TimeUnit.SECONDS) shouldBe true
                withClue("the pool idle again, nothing counted for nobody: " + describeCtl(d.pool.idle.ctl())) {
                    eventually(10_000) {
                        val c = d.pool.idle.ctl()
                        Ctl.active(c) == 0 && Ctl.searching(c) == 0 && Ctl.top(c) == 1
                    } shouldBe true
                }
            } finally {
                stopWithoutHook(d)
            }
        }
    }

    test("a wake-up cut short just before shutdownNow(): stop() finishes it, and the pool terminates") {
        // The worker's node is popped and counted, its claim left for a completer. The monitor,
        // which finishes such a step at its next look, stopped watching at STOP, and stop()'s
        // wakeAll() popped only the nodes still on the stack: before the fix the worker slept
        // IDLE and unlinked, and the pool never terminated (the ledger soak hung so, once in
        // about 1,500 s). A monitor interval long enough that it does not look first.
        val d = parkedPool("cut-then-stop", interval = Duration.ofSeconds(20))
        try {
            armOnce(d.pool.idle, PendingPop.CLAIM)
            shouldThrow<InjectedError> { d.executor.execute { } }
            d.executor.shutdownNow()
            withClue(describeCtl(d.pool.idle.ctl())) { d.executor.awaitTermination(10, TimeUnit.SECONDS) shouldBe true }
        } finally {
            stopWithoutHook(d)
        }
    }

    test("a wake-up cut short just after shutdownNow() woke everyone: the monitor finishes it, and the pool terminates") {
        // The popper's catch runs after stop()'s wakeAll(), which therefore found nothing left to
        // finish; only the monitor, which goes on finishing left pops until termination
        // (StarvationMonitor.finishWakeUpsUntilTerminated), can. Without it the popped worker
        // sleeps IDLE and unlinked, and the pool never terminates.
        val d = parkedPool("stop-then-cut", interval = Duration.ofMillis(50))
        val inClaim = CountDownLatch(1)
        val stopped = CountDownLatch(1)
        try {
            val popper = Thread.currentThread()
            d.pool.idle.faultHook = java.util.function.IntConsumer { step ->
                if (step == PendingPop.CLAIM && Thread.currentThread() === popper) {
                    d.pool.idle.faultHook = null
                    inClaim.countDown()
                    stopped.await(10, TimeUnit.SECONDS) // the node is popped, its claim not yet made
                    throw InjectedError()
                }
            }
            val stopper = Thread {
                inClaim.await(10, TimeUnit.SECONDS)
                d.executor.shutdownNow()
                stopped.countDown()
            }.apply { start() }
            shouldThrow<InjectedError> { d.executor.execute { } }
            stopper.join(10_000)
            withClue("shutdownNow() returned while the popper was inside its claim") { stopped.count shouldBe 0L }
            withClue(describeCtl(d.pool.idle.ctl())) { d.executor.awaitTermination(10, TimeUnit.SECONDS) shouldBe true }
        } finally {
            stopped.countDown()
            stopWithoutHook(d)
        }
    }

    test("the undo of a stale pop cut short: the completer undoes it, and the counts come right") {
        // Idle control alone: a stale node (woken in place, still linked) is popped, and the
        // Error comes between the failed claim and the undo of the pop's count.
        val (nodes, idle) = twoIdleWorkers("undo") // 0 on top of 1
        idle.wakeSelf(nodes[1]) // 1 wakes in place: stale, still linked under 0
        idle.wakeOrStartRegardless() // pops and claims 0
        nodes[1].parkState() shouldBe ParkState.RUNNING_ON_STACK
        armOnce(idle, PendingPop.UNDO)
        shouldThrow<InjectedError> { idle.wakeOrStartRegardless() } // pops stale 1: claim fails, undo cut short
        Ctl.active(idle.ctl()) shouldBe 3 // one count too many, left for the completer
        idle.finishLeftPops()
        withClue(describeCtl(idle.ctl())) {
            Ctl.active(idle.ctl()) shouldBe 2
            Ctl.top(idle.ctl()) shouldBe 0
            nodes[1].parkState() shouldBe ParkState.RUNNING
        }
    }

    for ((step, name) in listOf(FaultStep.REPAIR_WALK to "before it took the step", FaultStep.REPAIR_TAKEN to "just after it took the step")) {
        test("a completer cut short $name: the step and the flag stand again, and the next completer finishes the wake-up") {
            // An outside submitter whose pop failed goes on, in the `finally` of a keyed offer or
            // a timer insert, to tryQuiesce -> wakeAll -> finishLeftPops on the same deep stack.
            // Before the fix an Error there, after the flag's swap, left the claim on the node and
            // the flag down: no completer looked again, and a stopped pool waited for a worker
            // that nobody would wake (the ledger soak with an overflowing submitter, round 410).
            val (nodes, idle) = twoIdleWorkers("repair") // 0 on top of 1
            armOnce(idle, PendingPop.CLAIM)
            shouldThrow<InjectedError> { idle.wakeOrStartRegardless() } // pops 0: its claim is left
            nodes[0].pendingPop shouldBe PendingPop.CLAIM
            idle.repairPending shouldBe true
            armOnce(idle, step)
            shouldThrow<InjectedError> { idle.finishLeftPops() } // the completer's walk cut short at node 0
            withClue("what the walk left: " + describeCtl(idle.ctl())) {
                nodes[0].pendingPop shouldBe PendingPop.CLAIM
                idle.repairPending shouldBe true
                nodes[0].parkState() shouldBe ParkState.IDLE
            }
            idle.finishLeftPops()
            withClue(describeCtl(idle.ctl())) {
                nodes[0].pendingPop shouldBe PendingPop.NONE
                nodes[0].parkState() shouldBe ParkState.RUNNING // claimed and unparked, counted once
                Ctl.active(idle.ctl()) shouldBe 1
                Ctl.top(idle.ctl()) shouldBe 2 // node 1 still idle on the stack
                idle.repairPending shouldBe false
            }
        }
    }

    test("a StackOverflowError while starting the first worker: nothing is rejected, the count is undone, the next signal starts it") {
        val d = StealingDispatcher(1, "start-overflow", StealingOptions(spinRounds = 0))
        try {
            armOnce(d.pool.idle, FaultStep.START) { StackOverflowError("injected") }
            val first = CountDownLatch(1)
            shouldThrow<StackOverflowError> { d.executor.execute { first.countDown() } }
            // Before the fix the failed start was taken for a thread that cannot start: with no
            // worker alive, the queued task was rejected (to the failure handler) and never ran.
            withClue(describeCtl(d.pool.idle.ctl())) { Ctl.live(d.pool.idle.ctl()) shouldBe 0 }
            val second = CountDownLatch(1)
            d.executor.execute { second.countDown() }
            first.await(10, TimeUnit.SECONDS) shouldBe true
            second.await(10, TimeUnit.SECONDS) shouldBe true
            d.stats().rejected shouldBe 0L
        } finally {
            stopWithoutHook(d)
        }
    }

    test("a phantom searcher in ctl: the monitor's backstop wakes the worker for queued work whatever ctl says") {
        val d = parkedPool("phantom")
        try {
            // What an Error left in an older version: a searcher and an active worker counted for nobody.
            CTL.getAndAdd(d.pool.idle, Ctl.SEARCHING_ONE + Ctl.ACTIVE_ONE)
            val ran = CountDownLatch(1)
            d.executor.execute { ran.countDown() } // signalWork sees a searcher: wakes nobody
            // Before the backstop by progress, the monitor trusted ctl (active 1): never woken.
            withClue(describeCtl(d.pool.idle.ctl())) { ran.await(10, TimeUnit.SECONDS) shouldBe true }
            (d.pool.monitor!!.backstopWakeUps >= 1) shouldBe true
        } finally {
            CTL.getAndAdd(d.pool.idle, -Ctl.SEARCHING_ONE - Ctl.ACTIVE_ONE)
            stopWithoutHook(d)
        }
    }

    test("a blocking region whose compensation fails is closed when the task ends: the worker counts and parks again") {
        val d = StealingDispatcher(2, "region", StealingOptions(spinRounds = 0, starvationInterval = Duration.ZERO))
        try {
            val w = AtomicReference<Worker>()
            val thrown = AtomicReference<Throwable>()
            val done = CountDownLatch(1)
            d.executor.execute {
                val me = Thread.currentThread() as Worker
                w.set(me)
                me.deque.push { } // visible, unsignalled work: entering the region starts a worker in its place
                armOnce(d.pool.idle, FaultStep.START) { StackOverflowError("injected") } // its start fails
                try {
                    runBlockingRegion { }
                } catch (e: StackOverflowError) {
                    thrown.set(e)
                }
                done.countDown()
            }
            done.await(10, TimeUnit.SECONDS) shouldBe true
            (thrown.get() is StackOverflowError) shouldBe true // thrown out of the region's entry, after its uncount
            val node = w.get().idleNode
            // Before the fix the region stayed open (MARKED, uncounted) and the worker's next idle
            // push failed its block-state check, killing the worker.
            withClue("block state ${node.blockState}, depth ${node.blockingDepth}") {
                eventually(10_000) { node.parkState() == ParkState.IDLE && node.blockingDepth == 0 } shouldBe true
            }
            val later = CountDownLatch(4)
            repeat(4) { d.executor.execute { later.countDown() } }
            later.await(10, TimeUnit.SECONDS) shouldBe true
            w.get().isAlive shouldBe true
            eventually(10_000) { Ctl.active(d.pool.idle.ctl()) == 0 } shouldBe true
        } finally {
            stopWithoutHook(d)
        }
    }

    test("an append of a fair queue's token cut short: the monitor appends it again, the task runs, the pool still quiesces") {
        val d = parkedPool("fair-token")
        try {
            val q = d.fairQueue("q")
            val active = FairRotation::class.java.getDeclaredField("active").apply { isAccessible = true }.get(d.pool.fair) as MpmcTaskQueue
            val owner = Thread.currentThread()
            active.afterClaim = Runnable { // the token's slot is claimed: the producer's stack ends here
                if (Thread.currentThread() === owner) {
                    active.afterClaim = null
                    throw StackOverflowError("injected")
                }
            }
            val ran = CountDownLatch(1)
            shouldThrow<StackOverflowError> { q.executor.execute { ran.countDown() } }
            // Before, the queue's flag said its token was held, by a producer that was gone: no
            // later offer appended it, and the task never ran.
            ran.await(10, TimeUnit.SECONDS) shouldBe true
            val later = CountDownLatch(1)
            q.executor.execute { later.countDown() }
            later.await(10, TimeUnit.SECONDS) shouldBe true
            d.close() // and it quiesces: nothing is left that a worker sees and cannot take
            d.executor.isTerminated shouldBe true
        } finally {
            stopWithoutHook(d)
        }
    }

    test("a shut-down pool whose last quiescence check was cut short: the monitor's look quiesces it") {
        val d = parkedPool("quiesce")
        try {
            val outside = d.pool.lifecycle.outsideOffers
            outside.incrementAndGet() // an outside keyed offer in progress: quiescence must wait for it
            val closer = Thread { d.close() }
            closer.start()
            eventually(10_000) { d.pool.isShutdown() } shouldBe true
            // The offer ends, but its tryQuiesce is cut short (an Error in its finally): nobody else
            // checks again, the worker is parked. Before, close() waited for ever.
            outside.decrementAndGet()
            closer.join(10_000)
            withClue("close() returned") { closer.isAlive shouldBe false }
            d.executor.isTerminated shouldBe true
        } finally {
            stopWithoutHook(d)
        }
    }

    // The overflow test: a 256 KB stack overflows, and execute() is called at every depth on the
    // way back. Before the fixes it wedged a one-worker pool within 20 rounds (a count left for a
    // searcher that did not exist, or the pool's lock left held). 50 rounds per JVM here (about
    // 3 s), 1,000 under -Pstress; 200 rounds each on JDK 17, Temurin 25 and one CPU: 0 wedged.
    val rounds = 50 * stressMultiplier
    val temurin25 = java.io.File("/usr/lib/jvm/temurin-25-jdk-amd64/bin/java")
    val taskset = listOf("/usr/bin/taskset", "/bin/taskset").firstOrNull { java.io.File(it).canExecute() }
    test("the overflow test wedges no round: this JVM's JDK") {
        runInFreshJvm(OverflowSignalMain::class.java, timeoutSeconds = 60 + 10L * rounds, args = listOf("$rounds")).last() shouldBe
            "rounds=$rounds wedged=0"
    }
    test("the overflow test wedges no round: Temurin 25").config(enabledIf = { temurin25.canExecute() }) {
        runInFreshJvm(OverflowSignalMain::class.java, timeoutSeconds = 60 + 10L * rounds, args = listOf("$rounds"), javaCommand = temurin25.path).last() shouldBe
            "rounds=$rounds wedged=0"
    }
    for (mode in listOf("keyed", "fair")) {
        test("the overflow test wedges no round: $mode submissions") {
            runInFreshJvm(OverflowSignalMain::class.java, timeoutSeconds = 60 + 10L * rounds, args = listOf("$rounds", mode)).last() shouldBe
                "rounds=$rounds wedged=0"
        }
    }
    test("the overflow test wedges no round: one CPU").config(enabledIf = { taskset != null }) {
        runInFreshJvm(OverflowSignalMain::class.java, timeoutSeconds = 60 + 10L * rounds, args = listOf("$rounds"), launcher = listOf(taskset!!, "-c", "0")).last() shouldBe
            "rounds=$rounds wedged=0"
    }

    test("shutdownNow() ends although a deque was left hiding by an Error in a removal") {
        val d = StealingDispatcher(1, "hiding", StealingOptions(spinRounds = 0))
        val release = CountDownLatch(1)
        val started = CountDownLatch(1)
        val w = AtomicReference<Worker>()
        try {
            d.executor.execute {
                w.set(Thread.currentThread() as Worker)
                started.countDown()
                release.await(30, TimeUnit.SECONDS)
            }
            started.await(10, TimeUnit.SECONDS) shouldBe true
            HIDINGS.getAndAdd(w.get().deque, 1) // odd: a removal that never ended, as an Error in its finally leaves it
            // Before the fix stop() took every empty steal for a removal in progress and retried for ever.
            runWithin(20_000) { d.executor.shutdownNow() }
        } finally {
            release.countDown()
            HIDINGS.getAndAdd(w.get().deque, 1)
            d.executor.awaitTermination(10, TimeUnit.SECONDS)
        }
    }
})

/** A host for idle control alone: no queued work, starts that always succeed. */
/** Idle control alone, for two started workers that went idle, node 0 on top of node 1. */
private fun twoIdleWorkers(name: String): Pair<Array<IdleNode>, IdleControl> {
    val nodes = Array(2) { IdleNode(it, Thread()) }
    val idle = IdleControl(parallelism = 2, maxThreads = 2, poolName = name, host = hostOf(nodes))
    check(idle.startOneCoreWorker() && idle.startOneCoreWorker())
    idle.pushIdle(nodes[1])
    idle.pushIdle(nodes[0])
    return nodes to idle
}

private fun hostOf(nodes: Array<IdleNode>) = object : IdleHost {
    override fun idleNode(index: Int): IdleNode = nodes[index]
    override fun forEachIdleNode(action: (IdleNode) -> Unit) = nodes.forEach(action)
    override fun hasVisibleWork(): Boolean = false
    override fun startWorker(): Boolean = true
    override fun workerStartFailed(cause: Throwable, noneLive: Boolean) = throw AssertionError("no start can fail here", cause)
    override fun workerActivated() {}
}
