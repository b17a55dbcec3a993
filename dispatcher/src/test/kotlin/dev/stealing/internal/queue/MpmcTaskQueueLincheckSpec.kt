package dev.stealing.internal.queue

import dev.stealing.testsupport.IdTask
import dev.stealing.testsupport.loadTolerant
import dev.stealing.testsupport.stressMultiplier
import io.kotest.core.spec.style.FunSpec
import org.jetbrains.lincheck.datastructures.IntGen
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions
import org.jetbrains.lincheck.datastructures.Operation
import org.jetbrains.lincheck.datastructures.Options
import org.jetbrains.lincheck.datastructures.Param
import org.jetbrains.lincheck.datastructures.StressOptions
import org.jetbrains.lincheck.datastructures.ThreadIdGen
import org.jetbrains.lincheck.datastructures.Validate
import org.jetbrains.lincheck.datastructures.verifier.EpsilonVerifier
import org.jetbrains.lincheck.datastructures.forClasses
import java.util.concurrent.atomic.AtomicInteger

/** Slots per segment in the models: the third task queued closes the first ring and links the next. */
private const val CAPACITY = 2

/** The Error a producer of [MpmcTaskQueueFailingOfferModel.offerFailing] throws between its claim and its publication. */
private class InjectedFailure : Error("injected between claim and publication")

/**
 * The model's view of producers between their claim of a slot and the end of their offer: it is
 * [MpmcTaskQueue.afterClaim], so it runs right after the claiming CAS, and the model checker runs
 * its methods without a switch inside them (see the guarantees in [MpmcTaskQueueLincheckSpec]),
 * so a claim and its count are one step. A producer that is to fail throws from here, as a
 * `StackOverflowError` between the claim and the publication would.
 */
class ClaimWatch : Runnable {
    private val claims = AtomicInteger()
    private val ended = AtomicInteger() // claims whose offer has returned or thrown
    private val failing = ThreadLocal<Boolean>()

    override fun run() {
        claims.incrementAndGet()
        if (failing.get() == true) throw InjectedFailure()
    }

    fun failNextClaim(fail: Boolean) = failing.set(fail)

    fun offerEnded() {
        ended.incrementAndGet()
    }

    /** The claims so far if no producer is between its claim and the end of its offer, else -1. */
    fun claimsIfNoneWriting(): Int {
        val e = ended.get()
        val c = claims.get()
        return if (c == e) c else -1
    }

    fun claims(): Int = claims.get()
}

/**
 * [MpmcTaskQueue] under Lincheck, with rings of [CAPACITY] slots so that segments fill, close
 * and are linked within a few operations: offers (several producers), offers whose producer
 * fails after its claim ([MpmcTaskQueueFailingOfferModel]), polls (several consumers),
 * [MpmcTaskQueue.close] and [MpmcTaskQueue.isDrained]. Linearizable against [SequentialTaskQueue], where an offer takes
 * effect at its claim.
 *
 * A poll that meets a slot claimed but not yet written answers null although the queue is not
 * empty, as documented: the pool reads that as "a producer is writing" and looks again. [poll]
 * does the same, and only then: it looks again only if some producer was between its claim and
 * the end of its offer during the poll ([ClaimWatch]), so a null given with no producer writing
 * must be an empty queue. A null that moved a consumer past such a slot, or a drained queue
 * while such a slot is still claimed, has no sequential explanation; a task that is never
 * published leaves the poll looking for ever, which Lincheck reports as a hang.
 *
 * [MpmcTaskQueue.size] is a racy estimate (it reads each segment's positions one after the
 * other), not linearizable, so it is not an operation here; [MpmcTaskQueueBatchModel] checks it
 * once the threads are done.
 */
@Param(name = "id", gen = IntGen::class, conf = "0:3")
open class MpmcTaskQueueLincheckModel {
    private val queue = MpmcTaskQueue(segmentCapacity = CAPACITY)
    private val tasks = Array(4) { IdTask(it) }
    private val watch = ClaimWatch().also { queue.afterClaim = it }

    @Operation
    fun offer(@Param(name = "id") id: Int): Boolean {
        watch.failNextClaim(false)
        val accepted = queue.offer(tasks[id])
        if (accepted) watch.offerEnded() // a refused offer claimed nothing
        return accepted
    }

    /** A producer that throws between its claim and its publication: the task is not accepted. */
    protected fun offerThatFails(id: Int): String {
        watch.failNextClaim(true)
        return try {
            if (queue.offer(tasks[id])) "accepted" else "refused"
        } catch (e: InjectedFailure) {
            watch.offerEnded()
            "failed"
        } finally {
            watch.failNextClaim(false)
        }
    }

    @Operation
    fun poll(): Int? {
        while (true) {
            val before = watch.claimsIfNoneWriting()
            val task = queue.poll()
            if (task != null) return (task as IdTask).id
            if (before >= 0 && watch.claims() == before) return null // nobody was writing: the queue was empty
            // A producer was writing during the poll: the null may stand for its slot. Look again.
        }
    }

    @Operation
    fun close() = queue.close()

    @Operation
    fun isDrained(): Boolean = queue.isDrained()
}

/**
 * [MpmcTaskQueueLincheckModel] with producers that fail between their claim and their
 * publication ([offerFailing]). Used in custom scenarios only (two consumers racing on a failed
 * slot have a scenario of their own in [MpmcTaskQueueLincheckSpec]).
 */
class MpmcTaskQueueFailingOfferModel : MpmcTaskQueueLincheckModel() {
    @Operation
    fun offerFailing(@Param(name = "id") id: Int): String = offerThatFails(id)
}

/**
 * The sequential specification: a FIFO with a closed flag. An offer after close is refused. A
 * failed producer leaves a hole (`null`): consumers pass over it, and it keeps the queue from
 * being drained until one has.
 */
class SequentialTaskQueue {
    private val items = ArrayDeque<Int?>()
    private var closed = false

    fun offer(id: Int): Boolean {
        if (closed) return false
        items.addLast(id)
        return true
    }

    fun offerFailing(@Suppress("UNUSED_PARAMETER") id: Int): String {
        if (closed) return "refused"
        items.addLast(null)
        return "failed"
    }

    fun poll(): Int? {
        while (items.isNotEmpty()) items.removeFirst()?.let { return it }
        return null
    }

    fun close() {
        closed = true
    }

    fun isDrained(): Boolean = closed && items.isEmpty()
}

/**
 * What each thread of [MpmcTaskQueueBatchModel] offered and took, by Lincheck's thread id: each
 * row is written by one thread at a time, and [check] reads them all once the threads are done.
 * All the model's bookkeeping is here, where the model checker does not interleave.
 */
class BatchLog(threads: Int) {
    private val accepted = Array(threads) { ArrayList<Int>() } // each producer's accepted ids, in offer order
    private val takes = Array(threads) { ArrayList<List<Int>>() } // each consumer's polls and batches, in order
    private val next = IntArray(threads)

    fun task(thread: Int): IdTask = IdTask(thread * 100 + next[thread]++)

    fun offered(thread: Int, task: IdTask, accepted: Boolean): Boolean {
        if (accepted) this.accepted[thread] += task.id
        return accepted
    }

    fun took(thread: Int, out: Array<Runnable?>, n: Int): Int {
        if (n > 0) takes[thread] += List(n) { (out[it] as IdTask).id }
        return n
    }

    /**
     * [queuedBefore] is what [MpmcTaskQueue.size] said once the threads were done, [rest] what a
     * last consumer then polled, one by one.
     */
    fun check(queuedBefore: Int, rest: List<Int>) {
        val all = accepted.flatMap { it }
        val takenBefore = takes.sumOf { seq -> seq.sumOf { it.size } }
        check(queuedBefore == all.size - takenBefore) { "size() is $queuedBefore, but ${all.size - takenBefore} accepted task(s) are not taken" }
        val sequences = takes.toList() + listOf(rest.map { listOf(it) })
        val taken = sequences.flatMap { seq -> seq.flatten() }
        check(taken.sorted() == all.sorted()) { "accepted ${all.sorted()}, taken ${taken.sorted()}" }
        val place = HashMap<Int, Pair<Int, Int>>() // id -> (producer, index among its accepted)
        accepted.forEachIndexed { p, ids -> ids.forEachIndexed { i, id -> place[id] = p to i } }
        for (seq in sequences) {
            val last = HashMap<Int, Int>()
            for (batch in seq) {
                val inBatch = HashMap<Int, Int>()
                for (id in batch) {
                    val (p, i) = place.getValue(id)
                    check(i > (last[p] ?: -1)) { "a consumer took $id after a later task of its producer: $seq" }
                    inBatch[p]?.let { check(i == it + 1) { "batch $batch skips over a task of producer $p" } }
                    last[p] = i
                    inBatch[p] = i
                }
            }
        }
    }
}

/**
 * Batch takes ([MpmcTaskQueue.pollBatch]) beside offers, polls and close, with rings of
 * [CAPACITY] slots. A batch takes the ready run at the head of the head segment in one CAS, so
 * how many it takes depends on where segments end and on slots still being written, which no
 * sequential FIFO decides: the results are not compared with a specification (EpsilonVerifier).
 * Instead, once the threads are done, [exactlyOnceInOrder] checks what was taken ([BatchLog.check]):
 * every accepted task exactly once (the rest polled afterwards), no refused one, each consumer
 * saw each producer's tasks in offer order, and a batch holds a producer's tasks without a gap
 * (its positions are one run). [MpmcTaskQueue.size] must then count the tasks not yet taken,
 * and the closed and emptied queue must read as drained.
 */
class MpmcTaskQueueBatchModel {
    private val queue = MpmcTaskQueue(segmentCapacity = CAPACITY)
    private val log = BatchLog(threads = 8) // ids of the parallel threads, then the initial and the post part

    @Operation
    fun offer(@Param(gen = ThreadIdGen::class) thread: Int): Boolean {
        val task = log.task(thread)
        return log.offered(thread, task, queue.offer(task))
    }

    @Operation
    fun poll(@Param(gen = ThreadIdGen::class) thread: Int): Int {
        val out = arrayOfNulls<Runnable>(1)
        out[0] = queue.poll()
        return log.took(thread, out, if (out[0] == null) 0 else 1)
    }

    @Operation
    fun pollBatch(@Param(gen = ThreadIdGen::class) thread: Int, @Param(gen = IntGen::class, conf = "2:3") size: Int): Int {
        val out = arrayOfNulls<Runnable>(size)
        return log.took(thread, out, queue.pollBatch(out))
    }

    @Operation
    fun close() = queue.close()

    @Validate
    fun exactlyOnceInOrder() {
        val queued = queue.size()
        val rest = ArrayList<Int>()
        while (true) rest += (queue.poll() as IdTask? ?: break).id
        log.check(queued, rest)
        queue.close()
        check(queue.isDrained()) { "closed and emptied, but not drained" }
    }
}

/** The guarantees both models need: [ClaimWatch] and [BatchLog] are bookkeeping of the model, one step each. */
private fun <O : Options<*, *>> O.modelGuarantees(): O {
    if (this is ModelCheckingOptions) addGuarantee(forClasses(ClaimWatch::class, BatchLog::class).allMethods().ignore())
    return this
}

class MpmcTaskQueueLincheckSpec : FunSpec({
    fun modelChecking() = loadTolerant(ModelCheckingOptions()).modelGuarantees()
        .sequentialSpecification(SequentialTaskQueue::class.java)

    test("model checking: offers, polls, close and isDrained from three threads") {
        modelChecking()
            .threads(3)
            .actorsPerThread(3)
            .actorsBefore(2)
            .iterations(BUDGET_ITERATIONS * stressMultiplier)
            .invocationsPerIteration(BUDGET_INVOCATIONS)
            .check(MpmcTaskQueueLincheckModel::class)
    }

    test("model checking: a slot claimed and not yet written while consumers poll and the queue closes") {
        modelChecking()
            .iterations(0) // only the scenarios below
            .invocationsPerIteration(SCENARIO_INVOCATIONS * stressMultiplier)
            // Task 1's producer claims the last slot of the first ring and has not written it
            // while a consumer takes task 0 and polls again, and close() runs: the poll must not
            // read the closed ring as exhausted, and the queue is not drained until 1 is taken.
            .addCustomScenario {
                initial { actor(MpmcTaskQueueLincheckModel::offer, 0) }
                parallel {
                    thread { actor(MpmcTaskQueueLincheckModel::offer, 1) }
                    thread { actor(MpmcTaskQueueLincheckModel::poll); actor(MpmcTaskQueueLincheckModel::poll) }
                    thread { actor(MpmcTaskQueueLincheckModel::close); actor(MpmcTaskQueueLincheckModel::isDrained) }
                }
            }
            // The same with a second producer that finds the first ring full and links the next:
            // a consumer that moved on before task 1 is written would lose it.
            .addCustomScenario {
                initial { actor(MpmcTaskQueueLincheckModel::offer, 0) }
                parallel {
                    thread { actor(MpmcTaskQueueLincheckModel::offer, 1) }
                    thread { actor(MpmcTaskQueueLincheckModel::offer, 2); actor(MpmcTaskQueueLincheckModel::close) }
                    thread {
                        actor(MpmcTaskQueueLincheckModel::poll)
                        actor(MpmcTaskQueueLincheckModel::poll)
                        actor(MpmcTaskQueueLincheckModel::isDrained)
                    }
                }
            }
            .check(MpmcTaskQueueLincheckModel::class)
    }

    test("model checking: a producer that fails after its claim, beside close and a consumer") {
        // Its slot is passed over, and the queue drains only once the consumer has passed it.
        modelChecking()
            .iterations(0)
            .invocationsPerIteration(SCENARIO_INVOCATIONS * stressMultiplier)
            .addCustomScenario {
                initial { actor(MpmcTaskQueueFailingOfferModel::offer, 0) }
                parallel {
                    thread { actor(MpmcTaskQueueFailingOfferModel::offerFailing, 1); actor(MpmcTaskQueueFailingOfferModel::offer, 2) }
                    thread {
                        actor(MpmcTaskQueueFailingOfferModel::poll)
                        actor(MpmcTaskQueueFailingOfferModel::poll)
                        actor(MpmcTaskQueueFailingOfferModel::poll)
                        actor(MpmcTaskQueueFailingOfferModel::isDrained)
                    }
                    thread { actor(MpmcTaskQueueFailingOfferModel::close); actor(MpmcTaskQueueFailingOfferModel::isDrained) }
                }
            }
            .check(MpmcTaskQueueFailingOfferModel::class)
    }

    test("model checking: a consumer never answers null while another passes a failed producer's slot") {
        // Queue: [failed slot, 1] in a closed ring, [2] in the next. A consumer reads the
        // positions, finds the head slot claimed and unpublished, and before it looks for the
        // failure marker a second consumer passes the slot (emptying it) and takes 1. The first
        // then read no marker and answered null, as if a producer were still writing, although
        // none was and task 2 was queued throughout: Segment.poll decided on a stale position.
        // It now reads the dequeue position again before it answers null.
        modelChecking()
            .iterations(0)
            .invocationsPerIteration(SCENARIO_INVOCATIONS)
            .addCustomScenario {
                initial {
                    actor(MpmcTaskQueueFailingOfferModel::offerFailing, 1)
                    actor(MpmcTaskQueueFailingOfferModel::offer, 1)
                    actor(MpmcTaskQueueFailingOfferModel::offer, 2)
                }
                parallel {
                    thread { actor(MpmcTaskQueueFailingOfferModel::poll) }
                    thread { actor(MpmcTaskQueueFailingOfferModel::poll) }
                }
            }
            .check(MpmcTaskQueueFailingOfferModel::class)
    }

    test("model checking: batch takes beside offers, polls and close: each accepted task once, in order, batches without gaps") {
        loadTolerant(ModelCheckingOptions()).modelGuarantees()
            .verifier(EpsilonVerifier::class.java) // see MpmcTaskQueueBatchModel
            .threads(3)
            .actorsPerThread(3)
            .actorsBefore(2)
            .iterations(BUDGET_ITERATIONS * stressMultiplier)
            .invocationsPerIteration(BUDGET_INVOCATIONS)
            .check(MpmcTaskQueueBatchModel::class)
    }

    test("stress: batch takes beside offers, polls and close: each accepted task once, in order, batches without gaps") {
        // Real threads. The model with a specification is not run so: there a claim and its
        // count in ClaimWatch are two steps, and a poll between them would be misjudged.
        loadTolerant(StressOptions())
            .verifier(EpsilonVerifier::class.java)
            .threads(3)
            .actorsPerThread(3)
            .actorsBefore(2)
            .iterations(if (stressMultiplier > 1) 10 * stressMultiplier else 5)
            .invocationsPerIteration(if (stressMultiplier > 1) 2_000 else 200)
            .check(MpmcTaskQueueBatchModel::class)
    }
})

/**
 * Random scenarios per model check and invocations of each: about 10 s per model beside other
 * CPU-bound processes (a load of 7 on 2 cores); -Pstress multiplies the scenarios.
 */
private const val BUDGET_ITERATIONS = 4
private const val BUDGET_INVOCATIONS = 300
private const val SCENARIO_INVOCATIONS = 500
