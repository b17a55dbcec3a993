package dev.stealing

import dev.stealing.testsupport.spin
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.CoroutineName
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.Job
import kotlinx.coroutines.ThreadContextElement
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import kotlinx.coroutines.yield
import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger
import kotlin.concurrent.thread
import kotlin.coroutines.CoroutineContext

/**
 * `forkJoin` on the dispatcher it is called on: the caller's context elements reach every half,
 * stolen ones included, and on limitedParallelism, affinity and fair-queue views the halves keep
 * to the view.
 */
class SuspendForkJoinContextSpec : FunSpec({
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
})

private val FJ_TRACE = ThreadLocal<String?>()

private class FjTrace(val id: String) : ThreadContextElement<String?> {
    companion object Key : CoroutineContext.Key<FjTrace>

    override val key: CoroutineContext.Key<*> get() = Key
    override fun updateThreadContext(context: CoroutineContext): String? = FJ_TRACE.get().also { FJ_TRACE.set(id) }
    override fun restoreThreadContext(context: CoroutineContext, oldState: String?) = FJ_TRACE.set(oldState)
}
