package dev.stealing

import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import java.util.concurrent.atomic.AtomicIntegerArray

class SuspendForkJoinSpec : FunSpec({
    test("fib with forkJoin per node on a pool: right result, every offered half taken back or stolen") {
        StealingDispatcher(2, "fj-fib").use { d ->
            runBlocking { withContext(d) { fjFib(22) } } shouldBe 17711L
            val s = d.stats()
            s.forks shouldBe 28656L // one per inner node: fib(23) - 1
            (s.forksInlined + s.forksStolen) shouldBe s.forks
        }
    }

    test("a pool of one: every half is taken back, none stolen") {
        StealingDispatcher(1, "fj-one").use { d ->
            runBlocking { withContext(d) { fjFib(20) } } shouldBe 6765L
            d.stats().forksStolen shouldBe 0L
            d.stats().forksInlined shouldBe 10945L
        }
    }

    test("off the pool (runBlocking, Dispatchers.Default) it is correct and offers nothing") {
        runBlocking { fjFib(15) } shouldBe 610L
        runBlocking { withContext(Dispatchers.Default) { fjFib(18) } } shouldBe 2584L
    }

    test("forkJoinAll: results in order; every task runs exactly once") {
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
    }

    test("left throws: right never starts when still queued") {
        StealingDispatcher(1, "fj-left-throws").use { d ->
            var rightRan = false
            runBlocking {
                withContext(d) {
                    shouldThrow<IllegalStateException> {
                        forkJoin({ error("left") }, { rightRan = true })
                    }.message shouldBe "left"
                }
            }
            rightRan shouldBe false
        }
    }
})

private suspend fun fjFib(n: Int): Long = if (n < 2) n.toLong() else {
    val (a, b) = forkJoin({ fjFib(n - 1) }, { fjFib(n - 2) })
    a + b
}
