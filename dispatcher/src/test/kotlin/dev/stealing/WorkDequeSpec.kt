package dev.stealing

import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.types.shouldBeSameInstanceAs
import java.util.concurrent.CyclicBarrier
import java.util.concurrent.atomic.AtomicIntegerArray
import kotlin.concurrent.thread

class WorkDequeSpec : FunSpec({
    test("owner pops newest first, thieves steal oldest first") {
        val d = WorkDeque(2)
        val t = Array(5) { IdTask(it) }
        t.forEach(d::push)
        d.size() shouldBe 5
        d.pop() shouldBeSameInstanceAs t[4]
        d.steal().taskOrNull shouldBeSameInstanceAs t[0]
        d.pop() shouldBeSameInstanceAs t[3]
        d.steal().taskOrNull shouldBeSameInstanceAs t[1]
        d.pop() shouldBeSameInstanceAs t[2]
        d.pop() shouldBe null
        d.steal().isEmpty shouldBe true
    }

    test("the ring grows and keeps order") {
        val d = WorkDeque(2)
        val t = Array(100) { IdTask(it) }
        t.forEach(d::push)
        (d.capacity() >= 100) shouldBe true
        for (i in 0 until 50) d.steal().taskOrNull shouldBeSameInstanceAs t[i]
        for (i in 99 downTo 50) d.pop() shouldBeSameInstanceAs t[i]
        d.isEmpty() shouldBe true
    }

    test("tryRemove takes a task from the middle and keeps the rest in order") {
        val d = WorkDeque(4)
        val t = Array(6) { IdTask(it) }
        t.forEach(d::push)
        d.tryRemove(t[2]) shouldBeSameInstanceAs t[2]
        d.tryRemove(t[0]) shouldBeSameInstanceAs t[0] // the oldest: taken by CAS like a thief
        d.tryRemove(t[5]) shouldBeSameInstanceAs t[5] // the newest: like pop
        d.tryRemove(t[2]) shouldBe null
        d.size() shouldBe 3
        d.steal().taskOrNull shouldBeSameInstanceAs t[1]
        d.pop() shouldBeSameInstanceAs t[4]
        d.pop() shouldBeSameInstanceAs t[3]
        d.pop() shouldBe null
    }

    test("tryRemove after wrap-around") {
        val d = WorkDeque(4)
        repeat(3) { d.push(IdTask(-1)); d.steal() } // advance top and bottom past the ring size
        val t = Array(4) { IdTask(it) }
        t.forEach(d::push)
        d.tryRemove(t[1]) shouldBeSameInstanceAs t[1]
        d.steal().taskOrNull shouldBeSameInstanceAs t[0]
        d.steal().taskOrNull shouldBeSameInstanceAs t[2]
        d.steal().taskOrNull shouldBeSameInstanceAs t[3]
    }

    test("popIfNewest takes only the newest task, and not a stale copy left by a steal") {
        val d = WorkDeque(4)
        val t = Array(3) { IdTask(it) }
        t.forEach(d::push)
        d.popIfNewest(t[1]) shouldBe false // queued, but not the newest: nothing changes
        d.size() shouldBe 3
        d.popIfNewest(t[2]) shouldBe true
        d.popIfNewest(t[2]) shouldBe false
        d.steal().taskOrNull shouldBeSameInstanceAs t[0]
        d.steal().taskOrNull shouldBeSameInstanceAs t[1] // its slot still holds t[1]: a stale copy
        d.popIfNewest(t[1]) shouldBe false
        d.size() shouldBe 0
        d.push(t[0])
        d.pop() shouldBeSameInstanceAs t[0] // the deque still works after the refused pop
    }

    test("owner push/pop/tryRemove/popIfNewest against two thieves: every task taken exactly once") {
        val n = 300_000 * stressMultiplier
        val taken = AtomicIntegerArray(n)
        val d = WorkDeque(2)
        val tasks = Array(n) { IdTask(it) }
        val start = CyclicBarrier(3)
        val done = java.util.concurrent.atomic.AtomicBoolean(false)
        val thieves = List(2) {
            thread(name = "thief-$it") {
                start.await()
                while (true) {
                    val r = d.steal()
                    val task = r.taskOrNull as IdTask?
                    if (task != null) taken.incrementAndGet(task.id)
                    else if (r.isEmpty && done.get()) break
                }
            }
        }
        start.await()
        var i = 0
        val rnd = java.util.Random(42)
        while (i < n) {
            val burst = 1 + rnd.nextInt(8)
            val first = i
            repeat(burst) { if (i < n) d.push(tasks[i++]) }
            when (rnd.nextInt(4)) {
                0 -> (d.pop() as IdTask?)?.let { taken.incrementAndGet(it.id) }
                1 -> {
                    val target = tasks[first + rnd.nextInt(i - first)]
                    (d.tryRemove(target) as IdTask?)?.let { taken.incrementAndGet(it.id) }
                }
                2 -> {
                    val target = tasks[i - 1 - rnd.nextInt(minOf(2, i - first))] // usually the newest
                    if (d.popIfNewest(target)) taken.incrementAndGet(target.id)
                }
                else -> {}
            }
        }
        while (true) (d.pop() as IdTask?)?.let { taken.incrementAndGet(it.id) } ?: break
        done.set(true)
        thieves.forEach { it.join() }
        for (k in 0 until n) if (taken[k] != 1) error("task $k taken ${taken[k]} times")
    }
})
