package dev.stealing.internal.idle

import dev.stealing.testsupport.loadTolerant
import dev.stealing.testsupport.stressMultiplier
import io.kotest.assertions.throwables.shouldThrowAny
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions
import org.jetbrains.lincheck.datastructures.Operation
import org.jetbrains.lincheck.datastructures.Validate
import org.jetbrains.lincheck.datastructures.scenario
import org.jetbrains.lincheck.datastructures.verifier.EpsilonVerifier
import java.util.concurrent.atomic.AtomicBoolean
import java.util.concurrent.atomic.AtomicInteger
import java.util.concurrent.atomic.AtomicReference
import java.util.function.IntConsumer

/**
 * [IdleControl] alone, against a fake [IdleHost]: queues that are just counts of tasks (a global
 * one and one deque per worker), and two started workers whose loop is reduced to the steps the
 * parking protocol is about. Producers publish (an atomic add, as the claiming CAS of a global
 * offer) and signal; worker 0 also forks while it runs, onto its own deque, and signals only if,
 * once the fork is queued, no older task is still queued below it (as `WorkerHost.signalAfterFork`:
 * push, fence, look). Each worker takes a task if it can
 * (its own deque first, then the global queue, then the other's deque), and otherwise goes
 * idle the way `Worker.parkIdle` does: push itself idle, re-scan, wake itself if the re-scan
 * saw work. A worker left idle stands for a parked thread:
 * its next step does nothing until a producer claims its node, as `parkWhileIdle` would, or
 * until keyed work for it arrives ([offerKeyed1]): then it wakes itself, in place if another
 * node is above it, as `parkWhileIdle` does.
 *
 * Errors in the signalling path: a producer's wake-up can be cut short by an Error after its
 * CAS on ctl popped a node ([publishCutAtClaim], [publishCutAtUndo]: a deep caller's
 * `StackOverflowError`); the starvation monitor's look ([monitorLook]) finishes what it left and,
 * as its backstop by progress, wakes or starts a worker for queued work whatever ctl says.
 *
 * After every scenario and one more look of the monitor ([noStrandedWork]): if a task is still queued while a worker is IDLE,
 * some worker is counted as searching and will look again. An awake worker that is not
 * searching does not count: it is running a task, which may block without telling the pool
 * (a latch, a barrier) for as long as the task it is waiting for stays queued. Further, every
 * IDLE worker is linked in the idle stack (else no producer could ever wake it), and `ACTIVE`
 * counts exactly the awake workers.
 */
open class IdleControlLincheckModel {
    private val work = AtomicInteger()

    /** Each worker's deque: tasks it forked, taken by it or stolen by the other. */
    private val deques = Array(2) { AtomicInteger() }

    private fun queued(): Int = work.get() + deques[0].get() + deques[1].get()
    private val nodes = Array(2) { IdleNode(it, Thread()) }

    /** Own worker only: the worker parked after its last step (its node was left IDLE). */
    private val parked = BooleanArray(2)

    /** Keyed work waiting for worker 1 (only it may run it; nobody else is woken for it). */
    private val keyedFor1 = AtomicBoolean()

    private val idle = IdleControl(parallelism = 2, maxThreads = 2, poolName = "model", host = fakeHost(nodes) { queued() > 0 })

    init {
        // Two started workers, each live, active and searching, as signalWork starts them.
        check(idle.startOneCoreWorker() && idle.startOneCoreWorker())
    }

    /** A producer publishes one task and signals. */
    @Operation
    fun publish() {
        work.incrementAndGet()
        idle.signalWork()
    }

    /**
     * Worker 0, while it runs a task, forks one onto its own deque and signals unless an older
     * task is still queued below it once the fork is queued. Nothing happens while it is idle or
     * has not yet run again after a claim (no task of its is running then).
     */
    @Operation(nonParallelGroup = "worker0")
    fun fork0(): String {
        if (nodes[0].parkState() == ParkState.IDLE || parked[0]) return "not running"
        if (forkLooksAfterPush) {
            deques[0].incrementAndGet() // the push (and the fence: the model is sequentially consistent)
            if (deques[0].get() < 2) idle.signalWork() // no older task below the fork
        } else {
            val older = deques[0].get() // looked before the push: a thief may take that task meanwhile
            deques[0].incrementAndGet()
            if (older == 0) idle.signalWork()
        }
        return "forked"
    }

    /** Whether a fork looks for an older task after its push (the protocol) or before it (broken). */
    protected open val forkLooksAfterPush: Boolean = true

    /**
     * A producer whose wake-up an Error cuts short at [step] ([PendingPop]), after its CAS on
     * ctl popped a node ([IdleControl.finishPop]): a `StackOverflowError` of a deep caller. The
     * step is left to a completer ([monitorLook]).
     */
    private fun publishCutShort(step: Int): String {
        work.incrementAndGet()
        cutShortAt.set(step)
        cutShortOn.set(Thread.currentThread())
        return try {
            idle.signalWork()
            "signalled"
        } catch (e: CutShort) {
            "cut short"
        } finally {
            cutShortOn.set(null)
        }
    }

    private val cutShortAt = AtomicInteger(PendingPop.NONE)
    private val cutShortOn = AtomicReference<Thread?>()

    private class CutShort : Error("injected")

    init {
        idle.faultHook = IntConsumer { step -> if (step == cutShortAt.get() && cutShortOn.get() === Thread.currentThread()) throw CutShort() }
    }

    @Operation
    fun publishCutAtClaim() = publishCutShort(PendingPop.CLAIM)

    @Operation
    fun publishCutAtUndo() = publishCutShort(PendingPop.UNDO)

    /**
     * The starvation monitor's look: it finishes the steps of pops an Error cut short, and (its
     * backstop by progress) wakes or starts a worker for queued work whatever ctl says.
     */
    @Operation
    fun monitorLook() {
        if (monitorFinishesLeftPops) idle.finishLeftPops()
        if (queued() > 0) idle.wakeOrStartRegardless()
    }

    /** Keyed work for worker 1: its producer only unparks it (a no-op here), never claims it. */
    @Operation
    fun offerKeyed1() = keyedFor1.set(true)

    @Operation(nonParallelGroup = "worker0")
    fun worker0(): String = step(0)

    @Operation(nonParallelGroup = "worker1")
    fun worker1(): String = step(1)

    /** Whether the worker re-scans after it pushed itself idle (the protocol) or before (broken). */
    protected open val rescanAfterPush: Boolean = true

    private fun step(i: Int): String {
        val node = nodes[i]
        if (node.parkState() == ParkState.IDLE) { // parked; nobody claimed it yet
            if (i != 1 || !keyedFor1.getAndSet(false)) return "asleep"
            idle.wakeSelf(node) // what parkWhileIdle does when hasOwnWork() says so
            parked[i] = false
            idle.endSearch(node) // found its task (the last searcher recruits another)
            return "ran keyed work"
        }
        if (parked[i]) { // a producer claimed the node: the parked thread runs again
            parked[i] = false
            check(idle.parkWhileIdle(node, Long.MAX_VALUE, this, { false }) == IdleControl.PARK_CLAIMED_BEFORE)
        }
        idle.beginSearch(node)
        if (take(deques[i]) || take(work) || take(deques[1 - i])) {
            idle.endSearch(node)
            return "ran"
        }
        if (rescanAfterPush) {
            idle.pushIdle(node)
            if (queued() > 0) { // the re-scan
                idle.wakeSelf(node)
                return "woke itself"
            }
        } else {
            if (queued() > 0) return "searching" // looked before announcing itself: the race
            idle.pushIdle(node)
        }
        parked[i] = true
        return "parked"
    }

    private fun take(queue: AtomicInteger): Boolean {
        while (true) {
            val n = queue.get()
            if (n == 0) return false
            if (queue.compareAndSet(n, n - 1)) return true
        }
    }

    /** Whether the monitor finishes the steps that an Error left undone (the protocol) or never does (broken). */
    protected open val monitorFinishesLeftPops: Boolean = true

    @Validate
    fun noStrandedWork() {
        if (monitorFinishesLeftPops) idle.finishLeftPops() // the monitor's next look
        val awake = nodes.count { it.parkState() != ParkState.IDLE }
        check(queued() == 0 || awake == nodes.size || Ctl.searching(idle.ctl()) > 0) {
            "work stranded: ${queued()} task(s) queued while a worker is idle and none is searching"
        }
        val linked = HashSet<Int>()
        var top = Ctl.top(idle.ctl())
        while (top != 0 && linked.add(top - 1)) top = nodes[top - 1].nextIdle
        for (node in nodes) {
            check(node.parkState() != ParkState.IDLE || node.index in linked) {
                "worker ${node.index} is idle but not on the idle stack: nobody can wake it"
            }
        }
        val active = Ctl.active(idle.ctl())
        check(active == awake) { "ACTIVE is $active, but $awake worker(s) are awake" }
    }
}

/** A host whose queues are [visibleWork] and whose thread starts always succeed. */
private fun fakeHost(nodes: Array<IdleNode>, visibleWork: () -> Boolean) = object : IdleHost {
    override fun idleNode(index: Int): IdleNode = nodes[index]
    override fun forEachIdleNode(action: (IdleNode) -> Unit) = nodes.forEach(action)
    override fun hasVisibleWork(): Boolean = visibleWork()
    override fun startWorker(): Boolean = true
    override fun workerStartFailed(cause: Throwable, noneLive: Boolean) = throw AssertionError("no start can fail here", cause)
    override fun workerActivated() {}
}

/** The same model with the sleeper's last look at the queues *before* it announces itself. */
class IdleControlBrokenModel : IdleControlLincheckModel() {
    override val rescanAfterPush: Boolean = false
}

/** The same model with nobody finishing what an Error left of a pop (as before finishPop's catch and IdleRepair.kt). */
class IdleControlNoRepairModel : IdleControlLincheckModel() {
    override val monitorFinishesLeftPops: Boolean = false
}

/** The same model with a fork that looks for an older task *before* its push (the skip as it was). */
class IdleControlEarlyForkLookModel : IdleControlLincheckModel() {
    override val forkLooksAfterPush: Boolean = false
}

/**
 * Worker 0 runs a task and forks twice while worker 1, idle, is woken by the first fork and
 * steals; then worker 1 looks again. Set up sequentially: both workers park (worker 0 on top),
 * a producer publishes, which wakes worker 0, and worker 0 takes that task.
 */
private fun forkRace() = scenario {
    initial {
        actor(IdleControlLincheckModel::worker1)
        actor(IdleControlLincheckModel::worker0)
        actor(IdleControlLincheckModel::publish)
        actor(IdleControlLincheckModel::worker0)
    }
    parallel {
        thread {
            actor(IdleControlLincheckModel::fork0)
            actor(IdleControlLincheckModel::fork0)
        }
        thread { actor(IdleControlLincheckModel::worker1); actor(IdleControlLincheckModel::worker1) }
    }
}

class IdleControlLincheckSpec : FunSpec({
    fun options() = loadTolerant(ModelCheckingOptions())
        .threads(3)
        .actorsPerThread(3)
        // Random scenarios: 5 in the default build (10 took 66 s on a quiet machine, 353 s beside four
        // CPU burners); -Pstress runs 10 per multiplier. The custom ones below run in every build.
        .iterations(if (stressMultiplier > 1) 10 * stressMultiplier else 5)
        .invocationsPerIteration(2_000)
        .verifier(EpsilonVerifier::class.java) // results depend on the interleaving; @Validate checks
        // The race the protocol closes: worker 1 is already idle; worker 0 finds nothing while a
        // producer publishes. (Random scenarios explore the rest.)
        .addCustomScenario {
            initial { actor(IdleControlLincheckModel::worker1) }
            parallel {
                thread { actor(IdleControlLincheckModel::publish) }
                thread { actor(IdleControlLincheckModel::worker0); actor(IdleControlLincheckModel::worker0) }
            }
        }

    test("model checking: producers signalling against two workers going idle never strand work") {
        options()
            // The re-idle race documented at IdleControl.goIdle. Set up sequentially: both
            // workers park (0 above 1); worker 1 wakes in place for keyed work (its node stays
            // linked, stale); a producer pops and claims worker 0, which runs the task, leaving
            // worker 1's stale node on top. Then worker 1 goes idle again while a producer (or
            // worker 0, as the last searcher seeing that producer's task) pops that node.
            .addCustomScenario {
                initial {
                    actor(IdleControlLincheckModel::worker1)
                    actor(IdleControlLincheckModel::worker0)
                    actor(IdleControlLincheckModel::offerKeyed1)
                    actor(IdleControlLincheckModel::worker1)
                    actor(IdleControlLincheckModel::publish)
                    actor(IdleControlLincheckModel::worker0)
                }
                parallel {
                    thread { actor(IdleControlLincheckModel::worker1) }
                    thread { actor(IdleControlLincheckModel::publish) }
                    thread { actor(IdleControlLincheckModel::worker0) }
                }
            }
            // Forks: worker 0 forks twice (the second, with the first still queued, reads no ctl) while
            // worker 1, idle at first, is woken by the first and steals; then both look again.
            .addCustomScenario {
                initial { actor(IdleControlLincheckModel::worker1) }
                parallel {
                    thread {
                        actor(IdleControlLincheckModel::fork0)
                        actor(IdleControlLincheckModel::fork0)
                        actor(IdleControlLincheckModel::worker0)
                    }
                    thread { actor(IdleControlLincheckModel::worker1); actor(IdleControlLincheckModel::worker1) }
                }
            }
            .addCustomScenario(forkRace())
            // A wake-up cut short by an Error, against a producer, a worker going idle and the monitor's look.
            .addCustomScenario {
                initial {
                    actor(IdleControlLincheckModel::worker1)
                    actor(IdleControlLincheckModel::worker0)
                }
                parallel {
                    thread { actor(IdleControlLincheckModel::publishCutAtClaim); actor(IdleControlLincheckModel::publish) }
                    thread { actor(IdleControlLincheckModel::worker0); actor(IdleControlLincheckModel::worker1) }
                    thread { actor(IdleControlLincheckModel::monitorLook) }
                }
            }
            .check(IdleControlLincheckModel::class)
    }

    test("the last searcher recruits a helper only when it sees more work") {
        // A recruit with nothing queued wakes a worker only to search and park again, on the
        // path of a caller's round trip through the pool.
        var visible = false
        val nodes = Array(2) { IdleNode(it, Thread()) }
        val idle = IdleControl(parallelism = 2, maxThreads = 2, poolName = "recruit", host = fakeHost(nodes) { visible })
        check(idle.startOneCoreWorker() && idle.startOneCoreWorker()) // both searching
        idle.pushIdle(nodes[1]) // worker 1 found nothing: idle (its thread would park)
        idle.endSearch(nodes[0]) // worker 0, the last searcher, took the only task
        nodes[1].parkState() shouldBe ParkState.IDLE
        idle.beginSearch(nodes[0])
        visible = true // this time more work is queued
        idle.endSearch(nodes[0])
        nodes[1].parkState() shouldBe ParkState.RUNNING
        Ctl.active(idle.ctl()) shouldBe 2
    }

    test("model checking finds the stranded fork when a fork looks for an older task before its push") {
        // Worker 0 runs a task (woken for a published one), worker 1 is idle. Worker 0 forks
        // twice; the first fork wakes worker 1, which steals it. With the look before the push,
        // the second fork can see the first still queued, then worker 1 steals it, finds nothing
        // more and parks, and only then does the second fork land: nobody is searching, and
        // worker 0's task may wait for it for ever (LivenessSpec's bursts of forks hung so).
        val failure = shouldThrowAny {
            options()
                .iterations(0)
                .addCustomScenario(forkRace())
                .check(IdleControlEarlyForkLookModel::class)
        }
        failure.toString() shouldContain "work stranded"
    }

    test("model checking finds the worker nobody can wake when an Error cuts a wake-up short and nobody finishes it") {
        // Both workers park; a producer's pop of worker 0 is cut short before its claim. Without
        // a completer, worker 0 stays IDLE, unlinked and counted: no producer can ever wake it.
        val failure = shouldThrowAny {
            options()
                .iterations(0)
                .addCustomScenario {
                    initial {
                        actor(IdleControlLincheckModel::worker1)
                        actor(IdleControlLincheckModel::worker0)
                    }
                    parallel {
                        thread { actor(IdleControlLincheckModel::publishCutAtClaim) }
                        thread { actor(IdleControlLincheckModel::publish) }
                    }
                }
                .check(IdleControlNoRepairModel::class)
        }
        failure.toString() shouldContain "not on the idle stack"
    }

    test("model checking finds the lost wake-up when the sleeper looks before it announces itself") {
        val failure = shouldThrowAny { options().check(IdleControlBrokenModel::class) }
        failure.toString() shouldContain "work stranded"
    }
})
