package dev.stealing

import dev.stealing.testsupport.runWithin
import dev.stealing.testsupport.stressMultiplier
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import kotlinx.coroutines.yield
import java.util.concurrent.atomic.AtomicIntegerArray

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
