package dev.stealing

import dev.stealing.internal.worker.Worker
import dev.stealing.testsupport.spin
import dev.stealing.testsupport.stressMultiplier
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldHaveSize
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.string.shouldNotContain
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger
import java.util.concurrent.atomic.AtomicIntegerArray
import java.util.concurrent.atomic.AtomicLong
import kotlin.random.Random

/**
 * [rounds] runs of `parallelReduceToLong` over 10M indices on a pool of [parallelism] workers:
 * the mapper counts each index in a ledger and gives 1, with an uneven cost so that pieces are
 * stolen mid-way. Null if every index was mapped exactly once and the sum is the count, else
 * what went wrong. Also run on one CPU ([OneCpuLoopLedgerMain]).
 */
internal fun reduceLedgerFailure(parallelism: Int, rounds: Int): String? {
    val d = StealingDispatcher(parallelism, "reduce-ledger-$parallelism")
    try {
        val n = 10_000_000
        repeat(rounds) { round ->
            val ledger = AtomicIntegerArray(n)
            val splits = d.stats().loopSplits
            val sum = d.parallelReduceToLong(0, n, 0L, { i ->
                if (i % 4096 == 0) spin(2_000)
                ledger.incrementAndGet(i).toLong()
            }, Long::plus)
            for (i in 0 until n) if (ledger.get(i) != 1) return "round $round: index $i mapped ${ledger.get(i)} times"
            if (sum != n.toLong()) return "round $round: the sum is $sum, not $n"
            if (parallelism > 1 && d.stats().loopSplits == splits) return "round $round: no split on $parallelism workers"
        }
        return null
    } finally {
        d.close()
    }
}

/** Ranges for the reductions: empty, one index, short, long, negative, and ending at Int.MAX_VALUE. */
private fun ranges(random: Random): List<Pair<Int, Int>> {
    val max = Int.MAX_VALUE
    val fixed = listOf(0 to 0, 5 to 5, 7 to 8, 0 to 3, -1_000_000 to 1_000_000, max - 300_000 to max, max - 1 to max, max to max, Int.MIN_VALUE to Int.MIN_VALUE + 50_000)
    return fixed + List(6) { val from = random.nextInt(-5_000_000, 5_000_000); from to from + random.nextInt(0, 3_000_000) }
}

private fun mixSum(from: Int, to: Int): Long { var s = 0L; for (i in from until to) s += JavaLoops.mix(i); return s }

class JavaLoopsSpec : FunSpec({
    for (parallelism in listOf(1, 2, 4)) {
        test("parallelReduceToLong over 10M indices maps each exactly once, on $parallelism worker(s), while the workers steal") {
            reduceLedgerFailure(parallelism, 2 * stressMultiplier) shouldBe null
        }
    }

    test("parallelReduceToLong and parallelReduceToDouble agree with the sequential loop on 1, 2 and 4 workers, order kept") {
        val random = Random(55)
        for (parallelism in listOf(1, 2, 4)) StealingDispatcher(parallelism, "reduce-$parallelism").use { d ->
            for ((from, to) in ranges(random)) withClue("[$from, $to) on $parallelism worker(s)") {
                JavaLoops.sumOfMix(d, from, to) shouldBe mixSum(from, to)
                var max = Long.MIN_VALUE
                var quarters = 0.0
                for (i in from until to) { max = maxOf(max, JavaLoops.mix(i)); quarters += (i and 1023) * 0.25 }
                JavaLoops.maxOfMix(d, from, to) shouldBe max
                JavaLoops.lastOfMix(d, from, to) shouldBe (if (from == to) Long.MIN_VALUE else JavaLoops.mix(to - 1))
                JavaLoops.sumOfQuarters(d, from, to) shouldBe quarters
                JavaLoops.maxAsDouble(d, from, to) shouldBe (if (from == to) Double.NEGATIVE_INFINITY else max.toDouble())
                // First-wins, associative and not commutative: pieces combined in index order.
                d.parallelReduceToDouble(from, to, Double.NaN, { it.toDouble() }, { a, b -> if (a.isNaN()) b else a }).toBits() shouldBe
                    (if (from == to) Double.NaN else from.toDouble()).toBits()
            }
        }
    }

    test("parallelCollect: the containers are folded in index order; a histogram matches the sequential one; on 1, 2 and 4 workers") {
        val random = Random(56)
        for (parallelism in listOf(1, 2, 4)) StealingDispatcher(parallelism, "collect-$parallelism").use { d ->
            for ((from, to) in ranges(random).filter { it.second - it.first <= 3_000_000 }) withClue("[$from, $to) on $parallelism worker(s)") {
                val list = JavaLoops.indices(d, from, to)
                list.size shouldBe to - from
                (list.indices.firstOrNull { list[it] != from + it } ?: -1) shouldBe -1
            }
            for (n in listOf(0, 1, 4097, 2_000_000)) {
                val data = IntArray(n) { random.nextInt() }
                val expected = LongArray(256).also { h -> for (x in data) h[x and 0xff]++ }
                withClue("histogram of $n on $parallelism worker(s)") { JavaLoops.histogram(d, data).contentEquals(expected) shouldBe true }
            }
            val containers = AtomicInteger()
            val splits = d.stats().loopSplits
            val total = d.parallelCollect(0, 3_000_000, { containers.incrementAndGet(); LongArray(1) }, { c, i -> if (i % 4096 == 0) spin(5_000); c[0]++ }, { a, b -> a[0] += b[0] })
            total[0] shouldBe 3_000_000L
            withClue("one container per piece: ${containers.get()} for ${d.stats().loopSplits - splits} splits") {
                containers.get().toLong() shouldBe d.stats().loopSplits - splits + 1
            }
        }
    }

    test("parallelMap (Java form) keeps the list's order, takes nulls, copies a linked list, on 1, 2 and 4 workers") {
        val random = Random(57)
        for (parallelism in listOf(1, 2, 4)) StealingDispatcher(parallelism, "map-$parallelism").use { d ->
            for (n in listOf(0, 1, 2, 4097, 300_000)) withClue("$n elements on $parallelism worker(s)") {
                val texts: List<String?> = List(n) { if (it % 97 == 13) null else "x".repeat(random.nextInt(0, 20)) }
                JavaLoops.lengths(d, texts) shouldBe texts.map { it?.length ?: -1 }
                val longs = List(n) { random.nextLong() }
                JavaLoops.map(d, longs) { x: Long -> x.toString() } shouldBe longs.map { it.toString() }
                JavaLoops.map(d, java.util.LinkedList(longs)) { x: Long -> if (x % 3 == 0L) null else x xor 1 } shouldBe
                    longs.map { if (it % 3 == 0L) null else it xor 1 }
            }
            val result = d.parallelMap(listOf(1, 2, 3)) { it * 2 }
            shouldThrow<UnsupportedOperationException> { (result as MutableList<Int>)[0] = 5 }
        }
    }

    test("each index and element is mapped exactly once, also across steals") {
        StealingDispatcher(2, "java-once").use { d ->
            val n = 2_000_000
            val seen = AtomicIntegerArray(n)
            d.parallelCollect(0, n, { "container" }, { _, i -> seen.incrementAndGet(i); if (i % 8192 == 0) spin(10_000) }, { _, _ -> })
            (0 until n).firstOrNull { seen.get(it) != 1 } shouldBe null
            val mapped = AtomicIntegerArray(n)
            d.parallelMap((0 until n).toList()) { i -> mapped.incrementAndGet(i) }.all { it == 1 } shouldBe true
            (0 until n).firstOrNull { mapped.get(it) != 1 } shouldBe null
        }
    }

    test("a failure in a reduction, collect or map: the first thrown, the others suppressed, every started piece ended") {
        StealingDispatcher(2, "java-failure").use { d ->
            // Two indices fail at once, one on each worker: one thrown, the other suppressed into it.
            fun twoFailures(): (Int) -> Unit {
                val gate = CountDownLatch(2)
                return { i -> gate.countDown(); gate.await(10, TimeUnit.SECONDS); throw IllegalStateException("failure $i") }
            }
            val calls = listOf<(((Int) -> Unit)) -> Unit>(
                { f -> d.parallelReduceToLong(0, 2, 0L, { f(it); 0L }, Long::plus) },
                { f -> d.parallelReduceToDouble(0, 2, 0.0, { f(it); 0.0 }, Double::plus) },
                { f -> d.parallelCollect<String>(0, 2, { "container" }, { _, i -> f(i) }, { _, _ -> }) },
                { f -> d.parallelMap(listOf(0, 1)) { f(it) } },
            )
            for ((k, call) in calls.withIndex()) withClue("form $k") {
                val e = shouldThrow<IllegalStateException> { call(twoFailures()) }
                e.suppressed.map { it.message } shouldBe listOf("failure ${1 - e.message!!.last().digitToInt()}")
            }
            // A failure stops the loop: pieces not started never start, running ones end before the throw.
            val ran = AtomicLong()
            val inBody = AtomicInteger()
            val e = shouldThrow<ArithmeticException> {
                d.parallelReduceToLong(0, 50_000_000, 0L, { i ->
                    inBody.incrementAndGet()
                    try {
                        ran.incrementAndGet()
                        if (i == 1_000_000 || i == 30_000_000) throw ArithmeticException("at $i")
                        i.toLong()
                    } finally {
                        inBody.decrementAndGet()
                    }
                }, Long::plus)
            }
            e.message!!.startsWith("at ") shouldBe true
            inBody.get() shouldBe 0
            withClue("ran ${ran.get()} of 50M") { (ran.get() < 50_000_000) shouldBe true }
            // The op and the combiner fail the same way.
            shouldThrow<ArithmeticException> { d.parallelReduceToLong(0, 100, 0L, { it.toLong() }, { _, _ -> throw ArithmeticException("op") }) }.message shouldBe "op"
            shouldThrow<ArithmeticException> {
                d.parallelCollect(0, 3_000_000, { IntArray(1) }, { _, i -> if (i % 4096 == 0) spin(5_000) }, { _, _ -> throw ArithmeticException("combiner") })
            }.message shouldBe "combiner"
        }
    }

    test("where they run: from a non-worker and from a worker of another pool on the pool's workers, from its own worker there too") {
        StealingDispatcher(2, "java-where").use { d ->
            StealingDispatcher(1, "java-other").use { other ->
                fun threadsOf(call: (MutableSet<Thread>) -> Unit): Set<Thread> = ConcurrentHashMap.newKeySet<Thread>().also(call)
                val forms = listOf<(MutableSet<Thread>) -> Unit>(
                    { t -> d.parallelReduceToLong(0, 100_000, 0L, { t += Thread.currentThread(); 1L }, Long::plus) shouldBe 100_000L },
                    { t -> d.parallelReduceToDouble(0, 100_000, 0.0, { t += Thread.currentThread(); 1.0 }, Double::plus) shouldBe 100_000.0 },
                    { t -> d.parallelCollect<String>(0, 100_000, { "container" }, { _, _ -> t += Thread.currentThread() }, { _, _ -> }) },
                    { t -> d.parallelMap(List(100_000) { it }) { t += Thread.currentThread() }.size shouldBe 100_000 },
                    { t -> d.parallelSort(Array(100_000) { -it }) { a, b -> t += Thread.currentThread(); a.compareTo(b) } },
                )
                for ((k, form) in forms.withIndex()) withClue("form $k") {
                    threadsOf(form).all { (it as? Worker)?.pool === d.pool } shouldBe true
                    other.executor.submit<Set<Thread>> { threadsOf(form) }.get(60, TimeUnit.SECONDS).all { (it as? Worker)?.pool === d.pool } shouldBe true
                    val caller = d.executor.submit<Pair<Thread, Set<Thread>>> { Thread.currentThread() to threadsOf(form) }.get(60, TimeUnit.SECONDS)
                    withClue("the calling worker takes part") { (caller.first in caller.second) shouldBe true }
                    caller.second.all { (it as? Worker)?.pool === d.pool } shouldBe true
                }
            }
        }
    }

    test("from > to names the method and both ends; a null argument names the public method and the parameter") {
        StealingDispatcher(1, "java-args").use { d ->
            shouldThrow<IllegalArgumentException> { d.parallelReduceToLong(5, 1, 0L, { 0L }, Long::plus) }.message shouldBe
                "parallelReduceToLong: from (5) must not be greater than to (1)"
            shouldThrow<IllegalArgumentException> { d.parallelReduceToDouble(0, -1, 0.0, { 0.0 }, Double::plus) }.message shouldBe
                "parallelReduceToDouble: from (0) must not be greater than to (-1)"
            shouldThrow<IllegalArgumentException> { d.parallelCollect(Int.MAX_VALUE, Int.MIN_VALUE, { 0 }, { _, _ -> }, { _, _ -> }) }.message shouldBe
                "parallelCollect: from (2147483647) must not be greater than to (-2147483648)"
            val messages = JavaLoops.nullMessages(d)
            messages shouldHaveSize 12
            val parameters = listOf("mapper", "op", "mapper", "op", "supplier", "accumulator", "combiner", "list", "mapper", "array", "comparator", "array")
            val methods = listOf("parallelReduceToLong", "parallelReduceToLong", "parallelReduceToDouble", "parallelReduceToDouble", "parallelCollect",
                "parallelCollect", "parallelCollect", "parallelMap", "parallelMap", "parallelSort", "parallelSort", "parallelSort")
            for ((k, m) in messages.withIndex()) withClue("call $k") {
                m shouldContain "StealingDispatcher.${methods[k]}"
                m shouldContain "parameter ${parameters[k]}"
                m shouldNotContain "PoolParallelOperations"
            }
        }
    }
})
