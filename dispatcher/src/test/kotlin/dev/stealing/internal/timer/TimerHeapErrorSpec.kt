package dev.stealing.internal.timer

import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe

private class TestTimer(val id: Int, deadline: Long) : Timer(deadline) {
    override fun run() {}
    override fun abandon(why: String) {}
    override fun toString(): String = "timer $id"
}

/** A hook that throws an `OutOfMemoryError` at the allocations [failAt] counts as true (1 for the first). */
private class FailingAllocations(private val failAt: (Int) -> Boolean) : Runnable {
    var allocations = 0
        private set

    override fun run() {
        if (failAt(++allocations)) throw OutOfMemoryError("test: allocation $allocations refused")
    }
}

/** Takes every timer due by [now] from [heap], earliest first. */
private fun TimerHeap.takeAllDue(now: Long): List<Int> {
    val into = arrayOfNulls<Timer>(1_024)
    val n = pollDue(now, into, into.size)
    return (0 until n).map { (into[it] as TestTimer).id }
}

/**
 * A worker's timer heap when an allocation fails (an `OutOfMemoryError` as the heap's arrays grow
 * or shrink, made by [DeadlineHeap.beforeAllocation]) or the closing drain's action throws:
 * every timer stays pending, is returned, or is passed on; none is lost and the heap stays whole.
 */
class TimerHeapErrorSpec : FunSpec({
    test("an OutOfMemoryError while the heap grows for offered timers leaves them offered, for the next take") {
        val heap = TimerHeap()
        repeat(TimerHeap.INITIAL_CAPACITY) { heap.add(TestTimer(100 + it, 100L + it)) } // full
        repeat(5) { heap.offer(TestTimer(it + 1, it + 1L)) }
        heap.beforeAllocation = FailingAllocations { true }
        shouldThrow<OutOfMemoryError> { heap.takeOffers() }
        heap.pendingCount() shouldBe TimerHeap.INITIAL_CAPACITY + 5
        heap.hasOffers() shouldBe true
        heap.beforeAllocation = null
        heap.takeOffers() shouldBe true // the offers are earlier than every timer in the heap
        heap.takeAllDue(now = 1_000) shouldBe (1..5).toList() + (100 until 100 + TimerHeap.INITIAL_CAPACITY).toList()
    }

    test("an OutOfMemoryError for the second array of a resize leaves the heap whole, and the add refused") {
        val heap = TimerHeap()
        repeat(TimerHeap.INITIAL_CAPACITY) { heap.add(TestTimer(it, 10L * it)) }
        val hook = FailingAllocations { it == 2 } // the deadlines' array, after the timers' one
        heap.beforeAllocation = hook
        val refused = TestTimer(-1, 5)
        shouldThrow<OutOfMemoryError> { heap.add(refused) }
        hook.allocations shouldBe 2
        refused.heap shouldBe null // not in the heap: a later cancel finds nothing to remove
        heap.remove(refused) shouldBe false
        heap.beforeAllocation = null
        val more = 3 * TimerHeap.INITIAL_CAPACITY
        repeat(more) { heap.add(TestTimer(1_000 + it, 10L * it + 1)) }
        val expected = ((0 until TimerHeap.INITIAL_CAPACITY).map { it to 10L * it } +
            (0 until more).map { (1_000 + it) to 10L * it + 1 }).sortedBy { it.second }.map { it.first }
        heap.takeAllDue(now = 1_000_000) shouldBe expected
    }

    test("a shrink that cannot allocate keeps the larger arrays, and the take keeps every timer it removed") {
        val heap = TimerHeap()
        val n = 100
        repeat(n) { heap.add(TestTimer(it, it.toLong())) }
        val grown = heap.capacity()
        heap.beforeAllocation = FailingAllocations { true }
        heap.takeAllDue(now = 1_000) shouldBe (0 until n).toList() // shrinks on the way, were it able to
        heap.capacity() shouldBe grown
        heap.pendingCount() shouldBe 0
        heap.beforeAllocation = null
        heap.add(TestTimer(n, 1)) shouldBe TimerHeap.ADDED_EARLIEST
        heap.takeAllDue(now = 1_000) shouldBe listOf(n)
    }

    test("the closing drain passes every timer on even when its action throws for some, then throws the first failure") {
        val heap = TimerHeap()
        repeat(3) { heap.add(TestTimer(it, 10L + it)) }
        repeat(3) { heap.offer(TestTimer(10 + it, 20L + it)) }
        val cancelled = TestTimer(99, 1)
        heap.offer(cancelled)
        heap.remove(cancelled) shouldBe true
        val passed = ArrayList<Int>()
        val failure = shouldThrow<IllegalStateException> {
            heap.closeAndDrain { t ->
                val id = (t as TestTimer).id
                passed += id
                t.heap shouldBe null
                if (id == 11 || id == 1) throw IllegalStateException("action failed for $id")
            }
        }
        passed.sorted() shouldBe listOf(0, 1, 2, 10, 11, 12)
        failure.message shouldBe "action failed for ${passed.first { it == 11 || it == 1 }}"
        failure.suppressed.map { it.message } shouldBe listOf("action failed for ${passed.last { it == 11 || it == 1 }}")
        heap.add(TestTimer(50, 1)) shouldBe TimerHeap.CLOSED
        heap.offer(TestTimer(51, 1)) shouldBe TimerHeap.CLOSED
        heap.pendingCount() shouldBe 0
    }
})
