package dev.stealing

import dev.stealing.internal.worker.Worker
import dev.stealing.testsupport.runInFreshJvm
import dev.stealing.testsupport.spin
import dev.stealing.testsupport.stressMultiplier
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.Job
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeout
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.CountDownLatch
import java.util.concurrent.RejectedExecutionException
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicBoolean
import java.util.concurrent.atomic.AtomicInteger
import java.util.concurrent.atomic.AtomicIntegerArray
import java.util.concurrent.atomic.AtomicLong

/** Every index of a ledger ran exactly once: the first index that did not, or -1. */
private fun firstNotOnce(ledger: AtomicIntegerArray): Int {
    for (i in 0 until ledger.length()) if (ledger.get(i) != 1) return i
    return -1
}

/**
 * [rounds] runs of `parallelForEach` over 10M indices on a pool of [parallelism] workers, each
 * index counted in a ledger; the body's cost is uneven, so pieces end at different times and
 * are stolen mid-way. Null if every index ran exactly once and the stats add up (no splits on
 * one worker, some on more; one piece per split plus the root), else what went wrong.
 */
internal fun loopLedgerFailure(parallelism: Int, rounds: Int): String? {
    val d = StealingDispatcher(parallelism, "loop-ledger-$parallelism")
    try {
        val n = 10_000_000
        repeat(rounds) { round ->
            val ledger = AtomicIntegerArray(n)
            val before = d.stats()
            runBlocking(d) {
                (0 until n).parallelForEach { i ->
                    ledger.incrementAndGet(i)
                    if (i % 4096 == 0) spin(2_000)
                }
            }
            val bad = firstNotOnce(ledger)
            if (bad >= 0) return "round $round: index $bad ran ${ledger.get(bad)} times"
            val after = d.stats()
            val splits = after.loopSplits - before.loopSplits
            val pieces = after.loopPieces - before.loopPieces
            if (parallelism == 1 && splits != 0L) return "round $round: $splits splits on one worker"
            if (parallelism > 1 && splits == 0L) return "round $round: no split on $parallelism workers"
            if (pieces != splits + 1) return "round $round: $pieces pieces for $splits splits"
        }
        return null
    } finally {
        d.close()
    }
}

class ParallelLoopsSpec : FunSpec({
    for (parallelism in listOf(1, 2, 4)) {
        test("parallelForEach over 10M indices runs each exactly once, on $parallelism worker(s), while the workers steal") {
            loopLedgerFailure(parallelism, 2 * stressMultiplier) shouldBe null
        }
    }

    test("the same ledger, and parallelReduceToLong's (JavaLoopsSpec), on one CPU: 2 and 4 workers, in a JVM that taskset confines to one CPU")
        .config(enabledIf = { java.io.File("/usr/bin/taskset").canExecute() || java.io.File("/bin/taskset").canExecute() }) {
            // One CPU: the workers interleave only where the OS preempts them, which reaches
            // interleavings that two CPUs seldom produce (a piece preempted between its
            // stopped-check and its block, a thief preempted inside a steal).
            runInFreshJvm(OneCpuLoopLedgerMain::class.java, launcher = listOf("taskset", "-c", "0")) shouldBe listOf("cpus=1 ok")
        }

    test("the Java form runs each index exactly once from outside the pool, from a worker, and nested") {
        val d = StealingDispatcher(2, "loop-java")
        try {
            val n = 3_000_000
            val ledger = AtomicIntegerArray(n)
            d.parallelFor(0, n) { i -> ledger.incrementAndGet(i) } // from the test thread: waits
            firstNotOnce(ledger) shouldBe -1
            val nested = AtomicIntegerArray(1000 * 1000)
            d.executor.submit {
                d.parallelFor(0, 1000) { i -> d.parallelFor(0, 1000) { j -> nested.incrementAndGet(i * 1000 + j) } }
            }.get(60, TimeUnit.SECONDS)
            firstNotOnce(nested) shouldBe -1
        } finally {
            d.close()
        }
    }

    test("nested loops from Kotlin: a loop's body runs another loop, and two loops run side by side under forkJoin") {
        val d = StealingDispatcher(2, "loop-nested")
        try {
            val a = AtomicIntegerArray(500 * 2000)
            val b = AtomicIntegerArray(200_000)
            val c = AtomicIntegerArray(200_000)
            runBlocking(d) {
                (0 until 500).parallelForEach { i -> d.parallelFor(0, 2000) { j -> a.incrementAndGet(i * 2000 + j) } }
                forkJoin(
                    { (0 until 200_000).parallelForEach { b.incrementAndGet(it) } },
                    { (0 until 200_000).parallelForEach { c.incrementAndGet(it) } },
                )
            }
            firstNotOnce(a) shouldBe -1
            firstNotOnce(b) shouldBe -1
            firstNotOnce(c) shouldBe -1
        } finally {
            d.close()
        }
    }

    test("parallelMap keeps the order, and parallelFold combines pieces in order (a non-commutative combine gives the sequential result)") {
        val d = StealingDispatcher(2, "loop-order")
        try {
            runBlocking(d) {
                val items = (0 until 200_000).map { "e$it" }
                val mapped = items.parallelMap { it.uppercase() }
                mapped shouldBe items.map { it.uppercase() }
                // A linked list is copied first; the result is still in order.
                java.util.LinkedList(items.take(5000)).parallelMap { it.length } shouldBe items.take(5000).map { it.length }

                val before = d.stats().loopSplits
                // String concatenation: associative, not commutative.
                val text = (0 until 20_000).parallelFold({ StringBuilder() }, { sb, i -> sb.append(i).append(',') }, { x, y -> x.append(y) })
                text.toString() shouldBe (0 until 20_000).joinToString(",", postfix = ",")
                // Lists: the pieces' order, also with cost that grows with the index.
                val list = (0 until 100_000).parallelFold({ ArrayList<Int>() }, { l, i -> if (i % 997 == 0) spin(20_000); l.add(i); l }, { x, y -> x.addAll(y); x })
                list shouldBe (0 until 100_000).toList()
                withClue("the folds above were split, so the order test means something") { (d.stats().loopSplits > before) shouldBe true }
                (0 until 100).parallelFold({ 0L }, { s, i -> s + i }, Long::plus) shouldBe 4950L
            }
        } finally {
            d.close()
        }
    }

    test("empty and one-element ranges, and ranges at Int.MIN_VALUE and Int.MAX_VALUE, without overflow") {
        val d = StealingDispatcher(2, "loop-bounds")
        try {
            runBlocking(d) {
                val seen = ConcurrentHashMap.newKeySet<Int>()
                IntRange.EMPTY.parallelForEach { seen += it }
                (5 until 5).parallelForEach { seen += it }
                seen.isEmpty() shouldBe true
                IntRange.EMPTY.parallelFold({ "init" }, { s, _ -> s + "x" }, { x, y -> x + y }) shouldBe "init"
                emptyList<Int>().parallelMap { it } shouldBe emptyList()
                (7..7).parallelForEach { seen += it }
                seen shouldBe setOf(7)
                listOf(3).parallelMap { it * 2 } shouldBe listOf(6)

                val top = (Int.MAX_VALUE - 100_000..Int.MAX_VALUE).parallelFold({ 0L }, { s, i -> s + (Int.MAX_VALUE - i) }, Long::plus)
                top shouldBe (0L..100_000L).sum()
                val bottom = (Int.MIN_VALUE..Int.MIN_VALUE + 100_000).parallelFold({ 0L }, { s, i -> s + (i - Int.MIN_VALUE.toLong()) }, Long::plus)
                bottom shouldBe (0L..100_000L).sum()
                d.parallelFor(Int.MAX_VALUE - 10, Int.MAX_VALUE) { seen += it }
                seen.size shouldBe 11
                // The index Int.MAX_VALUE runs apart from its block: alone, and after others, for
                // each accumulator kind.
                val last = ConcurrentHashMap.newKeySet<Int>()
                (Int.MAX_VALUE..Int.MAX_VALUE).parallelForEach { last += it }
                last shouldBe setOf(Int.MAX_VALUE)
                (Int.MAX_VALUE..Int.MAX_VALUE).parallelFold({ 0 }, { s, i -> s + (i - Int.MAX_VALUE + 1) }, Int::plus) shouldBe 1
                (Int.MAX_VALUE - 2..Int.MAX_VALUE).parallelFold({ 0.0 }, { s, i -> s + (Int.MAX_VALUE - i) }, Double::plus) shouldBe 3.0
                val tail = (Int.MAX_VALUE - 2..Int.MAX_VALUE).parallelFold({ mutableListOf<Int>() }, { l, i -> l.add(i); l }, { a, b -> a.addAll(b); a })
                tail shouldBe listOf(Int.MAX_VALUE - 2, Int.MAX_VALUE - 1, Int.MAX_VALUE)
            }
        } finally {
            d.close()
        }
    }

    test("the whole Int range, Int.MIN_VALUE..Int.MAX_VALUE: every index once (counted per piece), both ends reached") {
        val d = StealingDispatcher(2, "loop-full-range")
        try {
            runBlocking(d) {
                val ends = AtomicInteger()
                // A mutable accumulator per piece: no boxing per index.
                val count = (Int.MIN_VALUE..Int.MAX_VALUE).parallelFold({ LongArray(1) }, { acc, i ->
                    acc[0]++
                    if (i == Int.MIN_VALUE || i == Int.MAX_VALUE) ends.incrementAndGet()
                    acc
                }, { x, y -> x[0] += y[0]; x })
                count[0] shouldBe (1L shl 32)
                ends.get() shouldBe 2
            }
        } finally {
            d.close()
        }
    }

    test("a failure: thrown once every started piece has ended, later failures suppressed, pieces not started never start") {
        val d = StealingDispatcher(2, "loop-failure")
        try {
            val n = 20_000_000
            val ran = AtomicLong()
            val inBody = AtomicInteger()
            val e = shouldThrow<IllegalStateException> {
                runBlocking(d) {
                    (0 until n).parallelForEach { i ->
                        inBody.incrementAndGet()
                        try {
                            ran.incrementAndGet()
                            if (i % 1_000_000 == 500_000) throw IllegalStateException("boom at $i")
                        } finally {
                            inBody.decrementAndGet()
                        }
                    }
                }
            }
            e.message!!.startsWith("boom at") shouldBe true
            inBody.get() shouldBe 0 // every started piece had ended when the exception came out
            withClue("pieces not started never started: ran ${ran.get()} of $n") { (ran.get() < n) shouldBe true }
            for (s in e.suppressed) (s.message!!.startsWith("boom at")) shouldBe true

            // Several failures at once: one thrown, the others suppressed into it.
            val gate = CountDownLatch(2)
            val multi = shouldThrow<IllegalArgumentException> {
                d.parallelFor(0, 2) { i ->
                    gate.countDown()
                    gate.await(10, TimeUnit.SECONDS)
                    throw IllegalArgumentException("failure $i")
                }
            }
            (multi.suppressed.size + 1) shouldBe 2
            (multi.suppressed.single() as IllegalArgumentException).message shouldBe "failure ${1 - multi.message!!.last().digitToInt()}"
        } finally {
            d.close()
        }
    }

    test("a fold whose initial or combine throws fails the same way") {
        val d = StealingDispatcher(2, "loop-fold-failure")
        try {
            runBlocking(d) {
                shouldThrow<ArithmeticException> {
                    (0 until 1000).parallelFold({ throw ArithmeticException("initial") }, { s: Int, i -> s + i }, Int::plus)
                }.message shouldBe "initial"
                shouldThrow<ArithmeticException> {
                    (0 until 5_000_000).parallelFold({ 0 }, { s, i -> if (i % 100_000 == 0) spin(50_000); s + 1 }, { _, _ -> throw ArithmeticException("combine") })
                }.message shouldBe "combine"
            }
        } finally {
            d.close()
        }
    }

    test("cancelling the caller stops the loop promptly, and every started piece has ended when the caller completes") {
        val d = StealingDispatcher(2, "loop-cancel")
        try {
            val started = CountDownLatch(1)
            val ran = AtomicLong()
            val inBody = AtomicInteger()
            val n = 2_000_000_000
            runBlocking {
                val job = launch(d) {
                    (0 until n).parallelForEach {
                        inBody.incrementAndGet()
                        ran.incrementAndGet()
                        started.countDown()
                        spin(1_000)
                        inBody.decrementAndGet()
                    }
                }
                started.await(10, TimeUnit.SECONDS) shouldBe true
                job.cancel()
                withTimeout(10_000) { job.join() }
                job.isCancelled shouldBe true
                inBody.get() shouldBe 0
                (ran.get() < n) shouldBe true
            }
            // From outside the pool: the caller suspends; cancelling it stops the loop as well.
            runBlocking {
                val running = CountDownLatch(1)
                val job = launch(Dispatchers.Default) {
                    (0 until n).parallelForEach { running.countDown(); spin(1_000) }
                }
                running.await(10, TimeUnit.SECONDS) shouldBe true
                job.cancel()
                withTimeout(10_000) { job.join() }
            }
            // A caller cancelled before it starts the loop runs nothing.
            val none = AtomicBoolean()
            runBlocking(d) {
                val job = launch(start = CoroutineStart.UNDISPATCHED) {
                    kotlinx.coroutines.currentCoroutineContext()[Job]!!.cancel()
                    (0 until 10).parallelForEach { none.set(true) }
                }
                job.join()
                job.isCancelled shouldBe true
            }
            none.get() shouldBe false
        } finally {
            d.close()
        }
    }

    test("where a loop runs: on the caller's pool, on the shared pool from elsewhere, sequentially in the caller on affinity, fair queue and limitedParallelism") {
        val d = StealingDispatcher(2, "loop-where")
        try {
            fun poolOf(t: Thread) = (t as? Worker)?.pool
            val threads = ConcurrentHashMap.newKeySet<Thread>()
            runBlocking(d) { (0 until 100_000).parallelForEach { threads += Thread.currentThread() } }
            threads.all { poolOf(it) === d.pool } shouldBe true

            threads.clear()
            runBlocking { (0 until 100_000).parallelForEach { threads += Thread.currentThread() } }
            threads.all { poolOf(it) === StealingDispatcher.shared.pool } shouldBe true

            threads.clear()
            runBlocking(Dispatchers.Default) { (0 until 1000).parallelForEach { threads += Thread.currentThread() } }
            threads.all { poolOf(it) === StealingDispatcher.shared.pool } shouldBe true

            // Views: the caller's thread only; at most one body at a time.
            val views = listOf(d.affinity("k"), d.fairQueue("loops"), d.limitedParallelism(1))
            for (view in views) {
                val concurrent = AtomicInteger()
                var most = 0
                val seen = ConcurrentHashMap.newKeySet<Thread>()
                val caller = runBlocking(view) {
                    (0 until 200_000).parallelForEach {
                        val c = concurrent.incrementAndGet()
                        if (c > most) most = c
                        seen += Thread.currentThread()
                        concurrent.decrementAndGet()
                    }
                    listOf(1, 2, 3).parallelMap { it + 1 } shouldBe listOf(2, 3, 4)
                    Thread.currentThread()
                }
                withClue("on $view") {
                    most shouldBe 1
                    seen shouldBe setOf(caller)
                }
            }
        } finally {
            d.close()
        }
    }

    test("a coroutine of the pool started undispatched off the pool moves onto it for the loop") {
        val d = StealingDispatcher(2, "loop-undispatched")
        try {
            val threads = ConcurrentHashMap.newKeySet<Thread>()
            runBlocking {
                launch(d, start = CoroutineStart.UNDISPATCHED) {
                    (0 until 10_000).parallelForEach { threads += Thread.currentThread() }
                }.join()
            }
            threads.all { (it as? Worker)?.pool === d.pool } shouldBe true
        } finally {
            d.close()
        }
    }

    test("a closed pool: the Java form is rejected naming the pool; a coroutine of it is cancelled with the rejection") {
        val d = StealingDispatcher(2, "loop-closed")
        d.close()
        shouldThrow<RejectedExecutionException> { d.parallelFor(0, 10) { } }.message shouldBe "StealingDispatcher 'loop-closed' is closed"
        shouldThrow<RejectedExecutionException> { d.parallelSort(IntArray(100_000) { it }) }
        shouldThrow<IllegalArgumentException> { d.parallelFor(5, 1) { } }.message shouldBe "parallelFor: from (5) must not be greater than to (1)"
        val ran = AtomicBoolean()
        val e = shouldThrow<CancellationException> { runBlocking { withContext(d) { (0 until 10).parallelForEach { ran.set(true) } } } }
        ran.get() shouldBe false
        withClue("the cancellation names the rejection: $e") {
            generateSequence<Throwable>(e) { it.cause }.any { it is RejectedExecutionException && it.message == "StealingDispatcher 'loop-closed' is closed" } shouldBe true
        }
    }

    test("the stats count a loop's pieces and splits, and a pool of one worker never splits") {
        val one = StealingDispatcher(1, "loop-one")
        val two = StealingDispatcher(2, "loop-two")
        try {
            runBlocking(one) { (0 until 1_000_000).parallelForEach { if (it % 1000 == 0) spin(1_000) } }
            one.stats().loopPieces shouldBe 1L
            one.stats().loopSplits shouldBe 0L
            runBlocking(two) { (0 until 1_000_000).parallelForEach { if (it % 1000 == 0) spin(1_000) } }
            val s = two.stats()
            (s.loopSplits > 0) shouldBe true
            s.loopPieces shouldBe s.loopSplits + 1
            s.toString().contains("loopPieces=${s.loopPieces}, loopSplits=${s.loopSplits}") shouldBe true
        } finally {
            one.close()
            two.close()
        }
    }
})
