package dev.stealing

import dev.stealing.internal.loops.IntMergeSort
import dev.stealing.internal.loops.LongMergeSort
import dev.stealing.internal.loops.ParallelMergeSort
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.async
import kotlinx.coroutines.runBlocking
import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicBoolean
import kotlin.concurrent.thread
import kotlin.random.Random

/** `IntArray.parallelSort`, `LongArray.parallelSort` and Java's `StealingDispatcher.parallelSort`. */
class ParallelSortSpec : FunSpec({
    test("parallelSort agrees with Arrays.sort on random, sorted, reversed and many-duplicates inputs, ints and longs, any pool size") {
        val random = Random(42)
        val inputs = listOf(
            "random" to { n: Int -> IntArray(n) { random.nextInt() } },
            "sorted" to { n: Int -> IntArray(n) { it } },
            "reversed" to { n: Int -> IntArray(n) { n - it } },
            "duplicates" to { n: Int -> IntArray(n) { random.nextInt(4) } },
        )
        for (parallelism in listOf(1, 2, 3, 4)) {
            val d = StealingDispatcher(parallelism, "sort-$parallelism")
            try {
                for ((kind, make) in inputs) for (n in listOf(0, 1, 2, 8191, 8193, 100_003, 1_000_000)) {
                    val a = make(n)
                    val expected = a.copyOf().also { java.util.Arrays.sort(it) }
                    val viaKotlin = a.copyOf()
                    runBlocking(d) { viaKotlin.parallelSort() }
                    withClue("$kind, n = $n, parallelism $parallelism (Kotlin)") { viaKotlin.contentEquals(expected) shouldBe true }
                    val viaJava = a.copyOf()
                    d.parallelSort(viaJava)
                    withClue("$kind, n = $n, parallelism $parallelism (Java)") { viaJava.contentEquals(expected) shouldBe true }
                    val longs = LongArray(n) { a[it].toLong() * 3_000_000_000L }
                    val expectedLongs = longs.copyOf().also { java.util.Arrays.sort(it) }
                    runBlocking(d) { longs.parallelSort() }
                    withClue("$kind, n = $n, parallelism $parallelism (longs)") { longs.contentEquals(expectedLongs) shouldBe true }
                }
            } finally {
                d.close()
            }
        }
        // From outside any pool: the shared pool sorts it.
        val a = IntArray(500_000) { random.nextInt() }
        val expected = a.copyOf().also { java.util.Arrays.sort(it) }
        runBlocking { a.parallelSort() }
        a.contentEquals(expected) shouldBe true
    }

    test("a cancelled sort keeps every element") {
        val d = StealingDispatcher(2, "sort-cancel")
        try {
            val a = IntArray(4_000_000) { Random(7).nextInt() }
            val before = a.copyOf().also { java.util.Arrays.sort(it) }
            runBlocking {
                val job = async(d) { a.parallelSort() }
                job.cancel()
                runCatching { job.await() }
            }
            a.copyOf().also { java.util.Arrays.sort(it) }.contentEquals(before) shouldBe true
        } finally {
            d.close()
        }
    }

    test("a sort stopped before its first leaf still merges every element: leaves that belong in the buffer are copied there unsorted") {
        // Stopped from the start, every leaf skips its sort; with 2, 4 and 3 workers the leaves
        // sit one, two and three levels down, so the buffer holds the leaves at odd depths.
        for (parallelism in listOf(2, 4, 3)) {
            val d = StealingDispatcher(parallelism, "sort-stopped-$parallelism")
            try {
                val n = ParallelMergeSort.MIN_LEAF * ParallelMergeSort.leafCount(parallelism) * 2 + 17
                val ints = IntArray(n) { Random(parallelism).nextInt() }
                val longs = LongArray(n) { ints[it] * 5_000_000_000L }
                val expectedInts = ints.sortedArray()
                val expectedLongs = longs.sortedArray()
                val pieces = d.stats().loopPieces
                runBlocking(d) {
                    IntMergeSort(ints).apply { cancel() }.sortAll(d.pool)
                    LongMergeSort(longs).apply { cancel() }.sortAll(d.pool)
                }
                withClue("parallelism $parallelism: the sort was cut into leaves") {
                    (d.stats().loopPieces - pieces > 2L * ParallelMergeSort.leafCount(parallelism)) shouldBe true
                }
                withClue("parallelism $parallelism: ints keep their elements") { ints.sortedArray().contentEquals(expectedInts) shouldBe true }
                withClue("parallelism $parallelism: longs keep their elements") { longs.sortedArray().contentEquals(expectedLongs) shouldBe true }
            } finally {
                d.close()
            }
        }
    }

    test("a failure in the half the sorting worker runs itself reaches the caller only after the forked half has ended") {
        // Two leaves on two workers: the left one, on the caller's worker, fails once the right
        // one (forked, taken by the other worker) has started; the right one waits for a release
        // that the watcher gives once the sort has returned, or after 1 s. With the join after a
        // failure the sort cannot return before that release; without it, it returned at once,
        // its forked half still running (an idle machine shows it; a very slow one may not).
        val d = StealingDispatcher(2, "sort-failure")
        try {
            val sort = HalfFailingSort(2 * ParallelMergeSort.MIN_LEAF)
            val returned = CountDownLatch(1)
            val watcher = thread(name = "sort-failure-watcher") {
                if (sort.leftFailing.await(30, TimeUnit.SECONDS)) returned.await(1, TimeUnit.SECONDS)
                sort.releaseRight.countDown()
            }
            var rightEndedAtReturn: Boolean? = null
            val error = runCatching {
                runBlocking(d) {
                    try {
                        sort.sortAll(d.pool)
                    } finally {
                        rightEndedAtReturn = sort.rightEnded.get()
                    }
                }
            }.exceptionOrNull()
            returned.countDown()
            watcher.join(30_000)
            withClue("the injected error reaches the caller (kotlinx may recover it as a copy with the original as its cause): $error") {
                generateSequence(error) { it.cause }.any { it === sort.injected } shouldBe true
            }
            withClue("the forked half had ended when the error reached the caller") { rightEndedAtReturn shouldBe true }
        } finally {
            d.close()
        }
    }

    test("leaves per worker count: as many as workers for a power of two, else the power of two at least twice as many") {
        (1..9).map { ParallelMergeSort.leafCount(it) } shouldBe listOf(1, 2, 8, 4, 16, 16, 16, 8, 32)
    }
})

/** Thrown by [HalfFailingSort]'s left leaf, as running out of memory would be. */
private class InjectedSortError : Error("injected into the left leaf")

/**
 * A sort of two leaves that sorts nothing: the left leaf (`lo == 0`, run by the caller's
 * worker) throws [injected] once the right leaf, forked, has started on the other worker; the
 * right leaf waits for [releaseRight], then records that it ended.
 */
private class HalfFailingSort(size: Int) : ParallelMergeSort(size) {
    val rightStarted = CountDownLatch(1)
    val leftFailing = CountDownLatch(1)
    val releaseRight = CountDownLatch(1)
    val rightEnded = AtomicBoolean(false)
    val injected = InjectedSortError()

    override fun sortLeaf(inBuffer: Boolean, lo: Int, hi: Int) {
        if (lo == 0) {
            check(rightStarted.await(30, TimeUnit.SECONDS)) { "the other worker never took the forked half" }
            leftFailing.countDown()
            throw injected
        }
        rightStarted.countDown()
        releaseRight.await(30, TimeUnit.SECONDS)
        rightEnded.set(true)
    }

    override fun copyToBuffer(lo: Int, hi: Int) = Unit

    override fun allocateBuffer() = Unit

    override fun merge(fromBuffer: Boolean, aLo: Int, aHi: Int, bLo: Int, bHi: Int, to: Int) = Unit

    override fun lowerBound(fromBuffer: Boolean, lo: Int, hi: Int, keyAt: Int): Int = lo

    override fun moveRun(fromBuffer: Boolean, lo: Int, hi: Int, to: Int) = Unit
}
