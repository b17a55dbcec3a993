package dev.stealing

import dev.stealing.internal.join.ForkHalf
import dev.stealing.internal.join.StolenHalf
import dev.stealing.internal.queue.StealResult
import dev.stealing.internal.queue.WorkDeque
import dev.stealing.testsupport.loadTolerant
import dev.stealing.testsupport.stressMultiplier
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.types.shouldBeInstanceOf
import io.kotest.matchers.types.shouldBeSameInstanceAs
import org.jetbrains.lincheck.datastructures.IntGen
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions
import org.jetbrains.lincheck.datastructures.Operation
import org.jetbrains.lincheck.datastructures.Param
import java.util.concurrent.CyclicBarrier
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicBoolean
import java.util.concurrent.atomic.AtomicIntegerArray
import java.util.concurrent.atomic.AtomicReference
import kotlin.concurrent.thread
import kotlin.coroutines.EmptyCoroutineContext

/**
 * Taking a `forkJoin` half back against a thief stealing it: each order, set up deterministically,
 * then racing, then under Lincheck model checking; exactly one party claims each half.
 */
class SuspendForkJoinTakeBackSpec : FunSpec({
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
})

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
