package dev.stealing

import dev.stealing.internal.join.ForkHalf
import dev.stealing.internal.join.StolenHalf
import dev.stealing.internal.queue.StealResult
import dev.stealing.internal.queue.WorkDeque
import dev.stealing.testsupport.loadTolerant
import dev.stealing.testsupport.runWithin
import dev.stealing.testsupport.spin
import dev.stealing.testsupport.stressMultiplier
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.types.shouldBeInstanceOf
import io.kotest.matchers.types.shouldBeSameInstanceAs
import kotlinx.coroutines.CancellationException as KCancellationException
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.CoroutineName
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.Job
import kotlinx.coroutines.ThreadContextElement
import kotlinx.coroutines.TimeoutCancellationException
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeout
import kotlinx.coroutines.yield
import org.jetbrains.lincheck.datastructures.IntGen
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions
import org.jetbrains.lincheck.datastructures.Operation
import org.jetbrains.lincheck.datastructures.Param
import java.util.concurrent.CountDownLatch
import java.util.concurrent.CyclicBarrier
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicBoolean
import java.util.concurrent.atomic.AtomicInteger
import java.util.concurrent.atomic.AtomicIntegerArray
import java.util.concurrent.atomic.AtomicReference
import kotlin.concurrent.thread
import kotlin.coroutines.CoroutineContext
import kotlin.coroutines.EmptyCoroutineContext

/**
 * `forkJoin` / `forkJoinAll` (ForkJoin.kt, docs/inlining.md "Suspend fork/join"). Where a right
 * half must run as a coroutine of its own ("stolen"), the tests make it so deterministically:
 * the left half suspends, so the caller's worker goes back to its loop and takes the half from
 * its own deque, the same path as a thief (on a pool of one, nobody else could have).
 */
class SuspendForkJoinSpec : FunSpec({
    // ---- results and counters -------------------------------------------------------------

    test("fib with forkJoin per node on a pool: right result, every offered half taken back or stolen") {
        StealingDispatcher(2, "fj-fib").use { d ->
            runBlocking { withContext(d) { fjFib(22) } } shouldBe 17711L
            val s = d.stats()
            s.forks shouldBe 28656L // one per inner node: fib(23) - 1
            (s.forksInlined + s.forksStolen) shouldBe s.forks
        }
    }

    test("a pool of one: every half is taken back and run inline, none stolen, no coroutine dispatched") {
        StealingDispatcher(1, "fj-one").use { d ->
            runBlocking {
                withContext(d) {
                    val before = d.stats().executed
                    fjFib(20) shouldBe 6765L
                    d.stats().executed shouldBe before // nothing went through the worker loop
                }
            }
            d.stats().forksStolen shouldBe 0L
            d.stats().forksInlined shouldBe 10945L
        }
    }

    test("the shared pool (StealingDispatcher itself as the dispatcher) offers halves too") {
        val before = StealingDispatcher.stats().forks
        runBlocking { withContext(StealingDispatcher) { fjFib(12) } } shouldBe 144L
        (StealingDispatcher.stats().forks - before >= 232L) shouldBe true // fib(13) - 1 forks
    }

    test("off the pool (runBlocking, Dispatchers.Default) it is correct and offers nothing") {
        runBlocking { fjFib(15) } shouldBe 610L
        runBlocking { withContext(Dispatchers.Default) { fjFib(18) } } shouldBe 2584L
    }

    test("forkJoinAll: results in order; every task runs exactly once; n - 1 forks") {
        val n = 10_000
        val runs = AtomicIntegerArray(n)
        StealingDispatcher(2, "fj-all").use { d ->
            val out = runBlocking {
                withContext(d) { forkJoinAll(List(n) { i -> suspend { runs.incrementAndGet(i); i * 2 } }) }
            }
            out shouldBe List(n) { it * 2 }
            d.stats().forks shouldBe (n - 1).toLong()
        }
        for (i in 0 until n) if (runs[i] != 1) error("task $i ran ${runs[i]} times")
        runBlocking { forkJoinAll(emptyList<suspend () -> Int>()) } shouldBe emptyList()
        runBlocking { forkJoinAll(listOf(suspend { 7 })) } shouldBe listOf(7)
    }

    test("halves that suspend (delay, withContext, yield) work inline and stolen") {
        StealingDispatcher(2, "fj-suspend").use { d ->
            suspend fun tree(depth: Int): Int = if (depth == 0) {
                delay(1)
                withContext(Dispatchers.IO) { yield() }
                1
            } else forkJoin({ yield(); tree(depth - 1) }, { withContext(Dispatchers.IO) { 0 } + tree(depth - 1) }).let { it.first + it.second }
            runBlocking { withContext(d) { tree(8) } } shouldBe 256
            val s = d.stats()
            (s.forksStolen > 0) shouldBe true // a left that suspends lets the worker run its right as a coroutine
            (s.forksInlined + s.forksStolen) shouldBe s.forks
        }
    }

    // ---- exactly once ---------------------------------------------------------------------

    test("exactly once under steal races: every leaf of a fork tree runs once (some halves suspend, resume elsewhere)") {
        val leaves = 150_000 * stressMultiplier // 3M under -Pstress
        val runs = AtomicIntegerArray(leaves)
        StealingDispatcher(4, "fj-ledger", StealingOptions(initialDequeCapacity = 2)).use { d ->
            suspend fun tree(lo: Int, hi: Int): Long {
                if (hi - lo == 1) {
                    runs.incrementAndGet(lo)
                    if (lo % 97 == 0) yield() // resumes from the global queue, often on another worker
                    return lo.toLong()
                }
                val mid = (lo + hi) ushr 1
                val (a, b) = forkJoin({ tree(lo, mid) }, { tree(mid, hi) })
                return a + b
            }
            runWithin(300_000) {
                runBlocking { withContext(d) { tree(0, leaves) } } shouldBe leaves.toLong() * (leaves - 1) / 2
            }
            val s = d.stats()
            s.forks shouldBe (leaves - 1).toLong()
            (s.forksInlined + s.forksStolen) shouldBe s.forks
            (s.forksStolen > 0) shouldBe true
            (s.forksInlined > 0) shouldBe true
        }
        for (i in 0 until leaves) if (runs[i] != 1) error("leaf $i ran ${runs[i]} times")
    }

    // The take-back-versus-steal race, on the real deque and ForkHalf, in each order and racing.

    test("take-back vs steal, deterministic: popped first, the thief finds nothing") {
        val deque = WorkDeque(initialCapacity = 4)
        val half = ForkHalf(suspend { 1 }, EmptyCoroutineContext)
        deque.push(half)
        deque.popIfNewest(half) shouldBe true
        val stolen = AtomicReference<StealResult>()
        thread { stolen.set(deque.steal()) }.join()
        stolen.get().isEmpty shouldBe true
        half.state shouldBe null // owned by the caller through the deque alone
    }

    test("take-back vs steal, deterministic: stolen and claimed first, the caller can neither pop nor claim it") {
        val deque = WorkDeque(initialCapacity = 4)
        val half = ForkHalf(suspend { 1 }, EmptyCoroutineContext)
        deque.push(half)
        val claimed = AtomicReference<Any?>()
        thread { claimed.set((deque.steal().taskOrNull as ForkHalf<*>).claimStolen()) }.join()
        claimed.get().shouldBeInstanceOf<StolenHalf<*>>()
        deque.popIfNewest(half) shouldBe false
        half.claimBack() shouldBe false
        half.state shouldBeSameInstanceAs claimed.get()
    }

    test("take-back vs steal, deterministic: the caller resumed elsewhere claims first, the thief finds a dead entry") {
        val deque = WorkDeque(initialCapacity = 4)
        val half = ForkHalf(suspend { 1 }, EmptyCoroutineContext)
        deque.push(half) // on the owner's deque (this thread)
        val claimedElsewhere = AtomicBoolean()
        thread { claimedElsewhere.set(half.claimBack()) }.join() // the caller, now on another thread
        claimedElsewhere.get() shouldBe true
        val thiefGot = AtomicReference<Any?>("unset")
        thread {
            val task = deque.steal().taskOrNull as ForkHalf<*>
            task.run() // a dead entry: returns without running anything
            thiefGot.set(task.claimStolen())
        }.join()
        thiefGot.get() shouldBe null
        half.state shouldBeSameInstanceAs ForkHalf.TAKEN
    }

    test("take-back vs steal, racing: exactly one of owner pop / claim elsewhere / thief claim wins, every round") {
        val rounds = 20_000 * stressMultiplier
        val deque = WorkDeque(initialCapacity = 2)
        val barrier = CyclicBarrier(3)
        val halves = arrayOfNulls<ForkHalf<Int>>(1)
        val wins = AtomicIntegerArray(rounds)
        val thief = thread(isDaemon = true) {
            repeat(rounds) { r ->
                barrier.await(10, TimeUnit.SECONDS)
                while (true) {
                    val res = deque.steal()
                    if (res.isRetry) continue
                    (res.taskOrNull as ForkHalf<*>?)?.claimStolen()?.let { wins.incrementAndGet(r) }
                    break
                }
                barrier.await(10, TimeUnit.SECONDS)
            }
        }
        val elsewhere = thread(isDaemon = true) {
            repeat(rounds) { r ->
                barrier.await(10, TimeUnit.SECONDS)
                if (r % 2 == 1 && halves[0]!!.claimBack()) wins.incrementAndGet(r) // odd rounds: the caller resumed elsewhere
                barrier.await(10, TimeUnit.SECONDS)
            }
        }
        repeat(rounds) { r ->
            val half = ForkHalf(suspend { r }, EmptyCoroutineContext)
            halves[0] = half
            deque.push(half)
            barrier.await(10, TimeUnit.SECONDS)
            if (r % 2 == 0 && (deque.popIfNewest(half) || half.claimBack())) wins.incrementAndGet(r) // even: the owner
            barrier.await(10, TimeUnit.SECONDS)
            while (deque.pop() != null) { /* dead entries of odd rounds */ }
        }
        thief.join(); elsewhere.join()
        for (r in 0 until rounds) if (wins[r] != 1) error("round $r: ${wins[r]} parties ran the half")
    }

    test("take-back vs steal under Lincheck model checking: one claim per half") {
        loadTolerant(ModelCheckingOptions())
            .threads(3)
            .actorsPerThread(3)
            .actorsBefore(2)
            .iterations(10 * stressMultiplier) // about 25 s beside busy CPUs; 200 scenarios under -Pstress
            .invocationsPerIteration(1_000)
            .sequentialSpecification(SequentialForkClaims::class.java)
            .check(ForkClaimModel::class)
    }

    // ---- exceptions and cancellation --------------------------------------------------------

    test("left throws while right is queued: right never starts, forkJoin throws left's exception") {
        StealingDispatcher(1, "fj-left-throws").use { d ->
            val rightRan = AtomicBoolean()
            runBlocking {
                withContext(d) {
                    shouldThrow<IllegalStateException> {
                        forkJoin({ error("left") }, { rightRan.set(true) })
                    }.message shouldBe "left"
                }
            }
            rightRan.get() shouldBe false
            d.stats().forksInlined shouldBe 1L
        }
    }

    test("right throws inline: forkJoin throws it after left completed") {
        StealingDispatcher(1, "fj-right-throws").use { d ->
            val leftDone = AtomicBoolean()
            runBlocking {
                withContext(d) {
                    shouldThrow<IllegalArgumentException> {
                        forkJoin({ leftDone.set(true) }, { throw IllegalArgumentException("right") })
                    }.message shouldBe "right"
                }
            }
            leftDone.get() shouldBe true
        }
    }

    test("stolen right throws first, then left: right's exception is thrown, left's suppressed, after both ended") {
        StealingDispatcher(1, "fj-both-right-first").use { d ->
            val rightJob = CompletableDeferred<Job>()
            val leftEnded = AtomicBoolean()
            val e = runBlocking {
                withContext(d) {
                    shouldThrow<IllegalStateException> {
                        forkJoin(
                            {
                                rightJob.await().join() // suspends: the worker runs right as a coroutine; it fails and ends
                                leftEnded.set(true)
                                throw IllegalStateException("left")
                            },
                            {
                                rightJob.complete(currentCoroutineContext()[Job]!!)
                                throw IllegalStateException("right")
                            },
                        )
                    }
                }
            }
            e.message shouldBe "right"
            e.suppressed.map { it.message } shouldBe listOf("left")
            leftEnded.get() shouldBe true
            d.stats().forksStolen shouldBe 1L
        }
    }

    test("left throws while stolen right runs: right is cancelled, left's exception thrown with right's suppressed") {
        StealingDispatcher(1, "fj-both-left-first").use { d ->
            val rightStarted = CompletableDeferred<Unit>()
            val rightSawCancel = AtomicBoolean()
            val e = runBlocking {
                withContext(d) {
                    shouldThrow<IllegalStateException> {
                        forkJoin(
                            {
                                rightStarted.await()
                                throw IllegalStateException("left")
                            },
                            {
                                rightStarted.complete(Unit)
                                try {
                                    awaitCancellation()
                                } catch (c: KCancellationException) {
                                    rightSawCancel.set(true)
                                    throw IllegalStateException("right, after its cancellation")
                                }
                            },
                        )
                    }
                }
            }
            e.message shouldBe "left"
            e.suppressed.map { it.message } shouldBe listOf("right, after its cancellation")
            rightSawCancel.get() shouldBe true
        }
    }

    test("left throws while stolen right runs and right just ends cancelled: only left's exception, nothing suppressed") {
        StealingDispatcher(1, "fj-left-cancels").use { d ->
            val rightStarted = CompletableDeferred<Unit>()
            val e = runBlocking {
                withContext(d) {
                    shouldThrow<IllegalStateException> {
                        forkJoin({ rightStarted.await(); error("left") }, { rightStarted.complete(Unit); awaitCancellation() })
                    }
                }
            }
            e.message shouldBe "left"
            e.suppressed.size shouldBe 0
        }
    }

    test("stolen right throws while left completes normally: left runs to its end, then right's exception") {
        StealingDispatcher(1, "fj-right-stolen-throws").use { d ->
            val rightJob = CompletableDeferred<Job>()
            val leftFinished = AtomicBoolean()
            runBlocking {
                withContext(d) {
                    shouldThrow<IllegalArgumentException> {
                        forkJoin(
                            { rightJob.await().join(); leftFinished.set(true) },
                            { rightJob.complete(currentCoroutineContext()[Job]!!); throw IllegalArgumentException("right") },
                        )
                    }.message shouldBe "right"
                }
            }
            leftFinished.get() shouldBe true
        }
    }

    test("the caller cancelled while right is stolen: both halves are cancelled and have ended when the caller ends") {
        StealingDispatcher(2, "fj-cancel-stolen").use { d ->
            val bothStarted = CountDownLatch(2)
            val ended = AtomicInteger()
            val thrown = AtomicReference<Throwable>()
            runBlocking {
                val job = launch(d) {
                    try {
                        forkJoin(
                            { try { bothStarted.countDown(); awaitCancellation() } finally { ended.incrementAndGet() } },
                            { try { bothStarted.countDown(); awaitCancellation() } finally { ended.incrementAndGet() } },
                        )
                    } catch (e: Throwable) {
                        thrown.set(e)
                        throw e
                    }
                }
                withContext(Dispatchers.IO) { bothStarted.await(10, TimeUnit.SECONDS) } shouldBe true
                job.cancel()
                withTimeout(10_000) { job.join() }
            }
            ended.get() shouldBe 2
            thrown.get().shouldBeInstanceOf<KCancellationException>()
            d.stats().forksStolen shouldBe 1L
        }
    }

    test("the caller cancelled while right is still queued: right never starts") {
        StealingDispatcher(1, "fj-cancel-queued").use { d ->
            val leftRunning = CountDownLatch(1)
            val proceed = CountDownLatch(1)
            val rightRan = AtomicBoolean()
            val thrown = AtomicReference<Throwable>()
            runBlocking {
                val job = launch(d) {
                    try {
                        forkJoin(
                            { leftRunning.countDown(); proceed.await(10, TimeUnit.SECONDS) }, // holds the only worker: right stays queued
                            { rightRan.set(true) },
                        )
                    } catch (e: Throwable) {
                        thrown.set(e)
                    }
                }
                withContext(Dispatchers.IO) { leftRunning.await(10, TimeUnit.SECONDS) } shouldBe true
                job.cancel()
                proceed.countDown()
                withTimeout(10_000) { job.join() }
            }
            rightRan.get() shouldBe false
            thrown.get().shouldBeInstanceOf<KCancellationException>()
        }
    }

    test("withTimeout around a fork tree: it times out and no half is left running") {
        StealingDispatcher(2, "fj-timeout").use { d ->
            val running = AtomicInteger()
            val started = AtomicInteger()
            suspend fun tree(depth: Int): Int = if (depth == 0) {
                running.incrementAndGet()
                started.incrementAndGet()
                try { delay(60_000); 1 } finally { running.decrementAndGet() } // never ends in time
            } else forkJoin({ tree(depth - 1) }, { tree(depth - 1) }).let { it.first + it.second }
            runBlocking {
                withContext(d) {
                    // Leaves suspend, so their workers go on to the halves still queued: many (on a
                    // fast machine all) leaves start before the timeout; none can end before it.
                    shouldThrow<TimeoutCancellationException> { withTimeout(100) { tree(12) } }
                }
            }
            running.get() shouldBe 0 // every half had ended when forkJoin threw
            (started.get() in 1..4096) shouldBe true
            d.stats().pendingTimers.sum() shouldBe 0 // every leaf's delay was cancelled and removed
        }
    }

    // ---- context ----------------------------------------------------------------------------

    test("a stolen right runs with the caller's CoroutineName and ThreadContextElement, restored on the worker afterwards") {
        StealingDispatcher(1, "fj-context").use { d ->
            val rightStarted = CompletableDeferred<Unit>()
            runBlocking {
                withContext(d + FjTrace("caller") + CoroutineName("fj-caller")) {
                    val (l, r) = forkJoin(
                        { rightStarted.await(); FJ_TRACE.get() to currentCoroutineContext()[CoroutineName]?.name },
                        {
                            val job = currentCoroutineContext()[Job]
                            rightStarted.complete(Unit)
                            yield() // a later step, dispatched again
                            Triple(FJ_TRACE.get(), currentCoroutineContext()[CoroutineName]?.name, job)
                        },
                    )
                    l shouldBe ("caller" to "fj-caller")
                    r.first shouldBe "caller"
                    r.second shouldBe "fj-caller"
                    (r.third !== currentCoroutineContext()[Job]) shouldBe true // a child job of its own
                    r.third!!.isCompleted shouldBe true
                    FJ_TRACE.get() shouldBe "caller"
                }
                d.stats().forksStolen shouldBe 1L
                withContext(d) { FJ_TRACE.get() } shouldBe null // the worker's own value is back
            }
        }
    }

    test("context elements across real steals: every half of a tree sees the caller's elements") {
        StealingDispatcher(4, "fj-context-tree").use { d ->
            val wrong = AtomicInteger()
            suspend fun tree(depth: Int): Int {
                if (FJ_TRACE.get() != "tree" || currentCoroutineContext()[CoroutineName]?.name != "tree") wrong.incrementAndGet()
                if (depth == 0) { spin(2_000); return 1 }
                return forkJoin({ tree(depth - 1) }, { tree(depth - 1) }).let { it.first + it.second }
            }
            runBlocking { withContext(d + FjTrace("tree") + CoroutineName("tree")) { tree(12) } } shouldBe 4096
            wrong.get() shouldBe 0
        }
    }

    // ---- forks never escape the caller's dispatcher -----------------------------------------

    test("on limitedParallelism(1) a fork tree never runs two halves at once, and nothing is offered to the pool") {
        StealingDispatcher(2, "fj-limited").use { d ->
            val view = d.limitedParallelism(1)
            val inside = AtomicInteger()
            val overlap = AtomicInteger()
            suspend fun tree(depth: Int): Int = if (depth == 0) {
                if (inside.incrementAndGet() > 1) overlap.incrementAndGet()
                spin(20_000)
                inside.decrementAndGet()
                yield()
                if (inside.incrementAndGet() > 1) overlap.incrementAndGet()
                inside.decrementAndGet()
                1
            } else forkJoin({ tree(depth - 1) }, { tree(depth - 1) }).let { it.first + it.second }
            runBlocking { withContext(view) { tree(9) } } shouldBe 512
            overlap.get() shouldBe 0
            d.stats().forks shouldBe 0L
        }
    }

    test("on limitedParallelism(2) the halves do run in parallel through the view (control for the test above)") {
        StealingDispatcher(2, "fj-limited-2").use { d ->
            val view = d.limitedParallelism(2)
            val bothIn = CountDownLatch(2)
            runBlocking {
                withContext(view) {
                    forkJoin(
                        { bothIn.countDown(); withContext(Dispatchers.IO) { bothIn.await(10, TimeUnit.SECONDS) } },
                        { bothIn.countDown(); withContext(Dispatchers.IO) { bothIn.await(10, TimeUnit.SECONDS) } },
                    )
                } shouldBe (true to true)
            }
        }
    }

    test("on an affinity dispatcher every half runs on the key's one worker thread") {
        StealingDispatcher(2, "fj-affinity").use { d ->
            val threads = java.util.Collections.synchronizedSet(HashSet<Thread>())
            suspend fun tree(depth: Int): Int = if (depth == 0) {
                threads += Thread.currentThread()
                yield()
                threads += Thread.currentThread()
                1
            } else forkJoin({ tree(depth - 1) }, { tree(depth - 1) }).let { it.first + it.second }
            runBlocking { withContext(d.affinity("key")) { tree(8) } } shouldBe 256
            threads.size shouldBe 1
            d.stats().forks shouldBe 0L
        }
    }

    test("on a fair queue the halves go through the fair queue") {
        StealingDispatcher(2, "fj-fair").use { d ->
            val fair = d.fairQueue("fj")
            runBlocking { withContext(fair) { fjFib(12) } } shouldBe 144L
            d.stats().forks shouldBe 0L
            (d.stats().fairQueues.single { it.name == "fj" }.executed > 0) shouldBe true
            fair.close()
        }
    }

    // ---- recursion depth --------------------------------------------------------------------

    test("10,000 deep, left-deep and right-deep, on a worker's default stack") {
        StealingDispatcher(2, "fj-deep").use { d ->
            suspend fun leftDeep(n: Int): Int = if (n == 0) 0 else forkJoin({ leftDeep(n - 1) }, { 1 }).let { it.first + it.second }
            suspend fun rightDeep(n: Int): Int = if (n == 0) 0 else forkJoin({ 1 }, { rightDeep(n - 1) }).let { it.first + it.second }
            runWithin(120_000) {
                runBlocking { withContext(d) { leftDeep(10_000) } } shouldBe 10_000
                runBlocking { withContext(d) { rightDeep(10_000) } } shouldBe 10_000
            }
        }
    }
})

private suspend fun fjFib(n: Int): Long = if (n < 2) n.toLong() else {
    val (a, b) = forkJoin({ fjFib(n - 1) }, { fjFib(n - 2) })
    a + b
}

private val FJ_TRACE = ThreadLocal<String?>()

private class FjTrace(val id: String) : ThreadContextElement<String?> {
    companion object Key : CoroutineContext.Key<FjTrace>

    override val key: CoroutineContext.Key<*> get() = Key
    override fun updateThreadContext(context: CoroutineContext): String? = FJ_TRACE.get().also { FJ_TRACE.set(id) }
    override fun restoreThreadContext(context: CoroutineContext, oldState: String?) = FJ_TRACE.set(oldState)
}

/**
 * The claim protocol of a forkJoin half under Lincheck: the owner pushes halves; the caller of
 * half 0 takes it back on the owner (pop, else CAS), the caller of half 1 has resumed on
 * another thread and can only claim it by CAS; a thief takes a task from the deque, then claims
 * it (two steps, as a worker's take and run). Linearizable against
 * [SequentialForkClaims]: each half is claimed by exactly one party.
 */
@Param(name = "id", gen = IntGen::class, conf = "0:1")
class ForkClaimModel {
    private val deque = WorkDeque(initialCapacity = 2, checksOwner = false) // the owner group confines the owner ops
    private val halves = Array(2) { ForkHalf(suspend { it }, EmptyCoroutineContext) }
    private val pushed = BooleanArray(2) // owner only

    @Operation(nonParallelGroup = "owner")
    fun push(@Param(name = "id") id: Int): Boolean {
        if (pushed[id]) return false
        pushed[id] = true
        deque.push(halves[id])
        return true
    }

    /** The caller of half 0, back on the owner: "popped", "claimed" (CAS, a dead entry left) or "lost" (stolen). */
    @Operation(nonParallelGroup = "owner")
    fun takeBack0(): String {
        if (deque.popIfNewest(halves[0])) return "popped"
        return if (halves[0].claimBack()) "claimed" else "lost"
    }

    /** The caller of half 1, resumed on another thread: it cannot pop, it claims by CAS. */
    @Operation(nonParallelGroup = "elsewhere")
    fun claimElsewhere1(): String = if (halves[1].claimBack()) "claimed" else "lost"

    private var held: ForkHalf<*>? = null // the thief's

    /** A thief takes the oldest task: the half's id, or null if empty. Two steps, as on a worker: take, then claim. */
    @Operation(nonParallelGroup = "thief")
    fun steal(): Int? {
        while (true) {
            val r = deque.steal()
            if (r.isRetry) continue
            val h = r.taskOrNull as ForkHalf<*>? ?: return null
            held = h
            return halves.indexOf(h)
        }
    }

    /** The thief runs what it took: true if it claimed the half, false for a dead entry (or nothing held). */
    @Operation(nonParallelGroup = "thief")
    fun claimStolen(): Boolean {
        val h = held ?: return false
        held = null
        return h.claimStolen() != null
    }
}

class SequentialForkClaims {
    private val d = ArrayDeque<Int>()
    private val pushed = BooleanArray(2)
    private val state = arrayOfNulls<String>(2) // null, "taken", "stolen"

    fun push(id: Int): Boolean {
        if (pushed[id]) return false
        pushed[id] = true
        d.addLast(id)
        return true
    }

    fun takeBack0(): String {
        if (d.lastOrNull() == 0) {
            d.removeLast()
            return "popped"
        }
        return claim(0)
    }

    fun claimElsewhere1(): String = claim(1)

    private fun claim(id: Int): String = if (state[id] == null) { state[id] = "taken"; "claimed" } else "lost"

    private var held: Int? = null

    fun steal(): Int? {
        val id = d.removeFirstOrNull() ?: return null
        held = id
        return id
    }

    fun claimStolen(): Boolean {
        val id = held ?: return false
        held = null
        if (state[id] != null) return false
        state[id] = "stolen"
        return true
    }
}
