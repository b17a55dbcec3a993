package dev.stealing

import dev.stealing.JavaLoops.Keyed
import dev.stealing.internal.loops.DoubleMergeSort
import dev.stealing.internal.loops.ObjectMergeSort
import dev.stealing.internal.loops.ParallelMergeSort
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.async
import kotlinx.coroutines.runBlocking
import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger
import kotlin.random.Random

/** Doubles that `<` alone orders wrongly: both zeros, NaNs (one with its sign bit set), infinities, the extremes. */
private val specials = doubleArrayOf(
    -0.0, 0.0, Double.NaN, Double.fromBits(0x7ff0_0000_0000_0001), Double.fromBits(-0x8_0000_0000_0000L), // NaNs: canonical, signalling, negative
    Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, Double.MIN_VALUE, -Double.MIN_VALUE, Double.MAX_VALUE, -Double.MAX_VALUE,
)

/** The double inputs: random, many specials, all zeros, all NaN, sorted, reversed. */
private fun doubleInputs(random: Random, n: Int): List<Pair<String, DoubleArray>> = listOf(
    "random" to DoubleArray(n) { random.nextDouble(-1e6, 1e6) },
    "specials" to DoubleArray(n) { if (random.nextInt(4) == 0) random.nextDouble(-2.0, 2.0) else specials[random.nextInt(specials.size)] },
    "zeros" to DoubleArray(n) { if (random.nextBoolean()) 0.0 else -0.0 },
    "zeros and NaN" to DoubleArray(n) { listOf(0.0, -0.0, Double.NaN)[random.nextInt(3)] },
    "sorted" to DoubleArray(n) { it.toDouble() - n / 2 },
    "reversed" to DoubleArray(n) { (n - it).toDouble() },
)

/** `Array<T>.parallelSortWith`, `DoubleArray.parallelSort` and their Java forms. */
class ObjectAndDoubleSortSpec : FunSpec({
    test("the object sort is stable and agrees with Arrays.sort (the same objects in the same places) on 1, 2, 3 and 4 workers") {
        val random = Random(58)
        for (parallelism in listOf(1, 2, 3, 4)) StealingDispatcher(parallelism, "object-sort-$parallelism").use { d ->
            for (n in listOf(0, 1, 2, 8191, 8193, 100_003, 600_000)) for (keys in listOf(3, 1000, Int.MAX_VALUE)) {
                val input = Array(n) { Keyed(random.nextInt(keys), it) }
                val byKey = compareBy<Keyed> { it.key }
                // Arrays.sort is stable, so the stable result is unique: compared by identity.
                val expected = input.copyOf().also { java.util.Arrays.sort(it, byKey) }
                val viaJava = input.copyOf()
                JavaLoops.sortByKey(d, viaJava)
                val viaKotlin = input.copyOf()
                runBlocking(d) { viaKotlin.parallelSortWith(byKey) }
                withClue("n = $n, $keys keys, $parallelism worker(s)") {
                    val firstBad = (1 until n).firstOrNull { i ->
                        viaJava[i - 1].key > viaJava[i].key || (viaJava[i - 1].key == viaJava[i].key && viaJava[i - 1].place > viaJava[i].place)
                    }
                    withClue("sorted by key, equal keys in input order (first break at ${firstBad ?: -1})") { firstBad shouldBe null }
                    (0 until n).all { viaJava[it] === expected[it] } shouldBe true
                    (0 until n).all { viaKotlin[it] === expected[it] } shouldBe true
                }
            }
        }
        // Nulls, if the comparator takes them; a comparator of a supertype; from outside any pool.
        val strings = Array<String?>(200_000) { if (it % 7 == 0) null else "s${Random(it).nextInt(1000)}" }
        val expected = strings.copyOf().also { java.util.Arrays.sort(it, nullsFirst(naturalOrder())) }
        runBlocking { strings.parallelSortWith(nullsFirst(naturalOrder())) }
        strings.contentEquals(expected) shouldBe true
        val objects: Array<Int> = Array(100_000) { Random(it).nextInt() }
        StealingDispatcher.shared.parallelSort(objects, Comparator<Any> { a, b -> (a as Int).compareTo(b as Int) })
        objects.contentEquals(objects.sortedArray()) shouldBe true
    }

    test("the double sort has the order of Arrays.sort(double[]): -0.0 before 0.0, NaN last, infinities; on 1, 2, 3 and 4 workers") {
        val random = Random(59)
        for (parallelism in listOf(1, 2, 3, 4)) StealingDispatcher(parallelism, "double-sort-$parallelism").use { d ->
            for (n in listOf(0, 1, 2, 3, 8191, 8193, 100_003, 1_000_000)) for ((kind, input) in doubleInputs(random, n)) {
                val expected = input.copyOf().also { java.util.Arrays.sort(it) }
                val viaJava = input.copyOf()
                d.parallelSort(viaJava)
                val viaKotlin = input.copyOf()
                runBlocking(d) { viaKotlin.parallelSort() }
                // DoubleArray.contentEquals compares as Double.equals: -0.0 differs from 0.0, NaN equals NaN.
                withClue("$kind, n = $n, $parallelism worker(s) (Java)") { viaJava.contentEquals(expected) shouldBe true }
                withClue("$kind, n = $n, $parallelism worker(s) (Kotlin)") { viaKotlin.contentEquals(expected) shouldBe true }
            }
        }
        val all = specials.copyOf()
        StealingDispatcher.shared.parallelSort(all)
        val shown = all.map { if (it.isNaN()) "NaN" else it.toString() }
        shown shouldBe listOf("-Infinity", "-1.7976931348623157E308", "-4.9E-324", "-0.0", "0.0", "4.9E-324", "1.7976931348623157E308", "Infinity", "NaN", "NaN", "NaN")
    }

    test("a comparator that throws: the first failure reaches the caller, the others suppressed, and the sort stops comparing") {
        StealingDispatcher(2, "sort-comparator-failure").use { d ->
            val n = 1_000_000
            val compares = AtomicInteger()
            val poison = Array(n) { Random(it).nextInt() }
            // Both leaves fail at once, one on each worker: one thrown, the other suppressed.
            val gate = CountDownLatch(2)
            val e = shouldThrow<IllegalStateException> {
                d.parallelSort(poison) { a, b ->
                    if (compares.incrementAndGet() > 1000) {
                        gate.countDown()
                        gate.await(10, TimeUnit.SECONDS)
                        throw IllegalStateException("comparator on ${Thread.currentThread().name}")
                    }
                    a.compareTo(b)
                }
            }
            e.message!!.startsWith("comparator on") shouldBe true
            withClue("the other leaf's failure is suppressed into the first: ${e.suppressed.toList()}") {
                e.suppressed.size shouldBe 1
                (e.suppressed[0].message != e.message) shouldBe true
            }
            withClue("no comparison after both failures: the merges only moved their runs") { compares.get() shouldBe 1002 }
            // The Kotlin form from a coroutine: the same failure.
            val k = shouldThrow<ArithmeticException> {
                runBlocking(d) { Array(100_000) { it }.parallelSortWith { _, _ -> throw ArithmeticException("kotlin comparator") } }
            }
            k.message shouldBe "kotlin comparator"
        }
    }

    test("a sort stopped before its first leaf, or cancelled mid-way, keeps every element, objects and doubles") {
        for (parallelism in listOf(2, 3)) StealingDispatcher(parallelism, "sort-stopped-$parallelism").use { d ->
            val n = ParallelMergeSort.MIN_LEAF * ParallelMergeSort.leafCount(parallelism) * 2 + 5
            val objects = Array(n) { Keyed(Random(it).nextInt(), it) }
            val doubles = DoubleArray(n) { if (it % 5 == 0) specials[it % specials.size] else Random(it).nextDouble() }
            val objectsBefore = objects.toSet()
            val doublesBefore = doubles.copyOf().also { java.util.Arrays.sort(it) }
            val pieces = d.stats().loopPieces
            runBlocking(d) {
                ObjectMergeSort(objects, compareBy<Keyed> { it.key }).apply { cancel() }.sortAll(d.pool)
                DoubleMergeSort(doubles).apply { cancel() }.sortAll(d.pool)
            }
            withClue("$parallelism workers: the sorts were cut into leaves") { (d.stats().loopPieces - pieces > 2L * ParallelMergeSort.leafCount(parallelism)) shouldBe true }
            objects.toSet() shouldBe objectsBefore
            doubles.copyOf().also { java.util.Arrays.sort(it) }.contentEquals(doublesBefore) shouldBe true
        }
        // Cancelled while its first comparison waits: the leaves running go on, the rest are skipped, every merge runs.
        StealingDispatcher(2, "sort-cancel-objects").use { d ->
            val objects = Array(2_000_000) { Keyed(Random(it).nextInt(), it) }
            val objectsBefore = objects.toSet()
            val comparing = CountDownLatch(1)
            val cancelled = CountDownLatch(1)
            runBlocking {
                val job = async(d) {
                    objects.parallelSortWith { a, b ->
                        if (comparing.count > 0) { comparing.countDown(); cancelled.await(30, TimeUnit.SECONDS) }
                        a.key.compareTo(b.key)
                    }
                }
                comparing.await(30, TimeUnit.SECONDS) shouldBe true
                job.cancel()
                cancelled.countDown()
                shouldThrow<kotlinx.coroutines.CancellationException> { job.await() }
            }
            objects.toSet() shouldBe objectsBefore
        }
    }
})
