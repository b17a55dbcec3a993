package dev.stealing.internal.queue

import dev.stealing.StealingDispatcher
import dev.stealing.internal.worker.Worker
import dev.stealing.testsupport.heldReferences
import dev.stealing.testsupport.IdTask
import dev.stealing.testsupport.stressMultiplier
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.shouldNotBe
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

    test("once its deque is empty the owner drops the references to tasks thieves took") {
        // A thief leaves its slot as it was; an idle worker's ring must not keep the last
        // stolen tasks (and all they reference) alive until the slots are reused.
        for (ownerTake in listOf("pop", "pollOldest")) {
            val d = WorkDeque(16)
            d.push(IdTask(-1)) // binds the deque to this thread
            d.pop()!!
            repeat(40) { d.push(IdTask(it)) } // grows the ring; 30 stolen, 10 taken by the owner
            thread { repeat(30) { d.steal().taskOrNull shouldNotBe null } }.join()
            repeat(10) { (if (ownerTake == "pop") d.pop() else d.pollOldest()) shouldNotBe null }
            (if (ownerTake == "pop") d.pop() else d.pollOldest()) shouldBe null
            d.heldReferences() shouldBe 0
            // and again after a wrap-around of the grown ring
            repeat(100) { round ->
                repeat(3) { d.push(IdTask(round)) }
                thread { repeat(2) { d.steal().taskOrNull shouldNotBe null } }.join()
                d.pop() shouldNotBe null
                d.pop() shouldBe null
                d.heldReferences() shouldBe 0
            }
        }
    }

    test("clearTakenIfEmpty drops stolen tasks after the owner lost the race for the last one") {
        val d = WorkDeque(8, owner = Thread.currentThread())
        repeat(5) { d.push(IdTask(it)) }
        thread { repeat(5) { d.steal().taskOrNull shouldNotBe null } }.join()
        d.heldReferences() shouldBe 5
        d.clearTakenIfEmpty()
        d.heldReferences() shouldBe 0
        d.push(IdTask(9))
        d.clearTakenIfEmpty() // not empty: a queued task is never cleared
        d.heldReferences() shouldBe 1
        (d.pop() as IdTask).id shouldBe 9
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
        d.tryRemove(t[2], SameTask).task shouldBeSameInstanceAs t[2]
        d.tryRemove(t[0], SameTask).task shouldBeSameInstanceAs t[0] // the oldest: taken by CAS like a thief
        d.tryRemove(t[5], SameTask).task shouldBeSameInstanceAs t[5] // the newest: like pop
        d.tryRemove(t[2], SameTask).task shouldBe null
        d.size() shouldBe 3
        d.steal().taskOrNull shouldBeSameInstanceAs t[1]
        d.pop() shouldBeSameInstanceAs t[4]
        d.pop() shouldBeSameInstanceAs t[3]
        d.pop() shouldBe null
    }

    test("tryRemove reports as a value whether the caller must re-publish") {
        val d = WorkDeque(4)
        val t = Array(3) { IdTask(it) }
        t.forEach(d::push)
        val miss = d.tryRemove(IdTask(9), SameTask) // nothing matches: bottom is not touched
        miss.task shouldBe null
        miss.mustRepublish shouldBe false
        val hit = d.tryRemove(t[1], SameTask) // from the middle: t[2] was hidden meanwhile
        hit.task shouldBeSameInstanceAs t[1]
        hit.mustRepublish shouldBe true
        d.tryRemove(t[2], SameTask).mustRepublish shouldBe true // any take: conservative
        d.size() shouldBe 1
    }

    test("owner operations assert the owner thread") {
        val d = WorkDeque(4, owner = Thread.currentThread())
        d.push(IdTask(0))
        var caught: Throwable? = null
        thread { try { d.pop() } catch (e: Throwable) { caught = e } }.join()
        (caught is AssertionError) shouldBe true
        d.size() shouldBe 1 // the refused pop changed nothing
        var stolen: Runnable? = null
        thread { stolen = d.steal().taskOrNull }.join() // stealing is for any thread
        stolen shouldNotBe null
    }

    test("a worker's deque belongs to the worker: pop from another thread fails the assertion") {
        StealingDispatcher(1, "owner").use { pool ->
            val w = pool.executor.submit<Thread> { Thread.currentThread() }.get() as Worker
            var caught: Throwable? = null
            try { w.deque.pop() } catch (e: Throwable) { caught = e }
            (caught is AssertionError) shouldBe true
        }
    }

    test("an ownerless deque binds to the first thread that calls an owner operation") {
        val d = WorkDeque(4)
        thread { d.push(IdTask(0)) }.join()
        var caught: Throwable? = null
        try { d.pop() } catch (e: Throwable) { caught = e }
        (caught is AssertionError) shouldBe true
        d.steal().taskOrNull shouldNotBe null // any thread may steal
    }

    test("tryRemove after wrap-around") {
        val d = WorkDeque(4)
        repeat(3) { d.push(IdTask(-1)); d.steal() } // advance top and bottom past the ring size
        val t = Array(4) { IdTask(it) }
        t.forEach(d::push)
        d.tryRemove(t[1], SameTask).task shouldBeSameInstanceAs t[1]
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
                    (d.tryRemove(target, SameTask).task as IdTask?)?.let { taken.incrementAndGet(it.id) }
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

    test("popNewestIf pops the newest task only if the matcher accepts it, and otherwise changes nothing") {
        val d = WorkDeque(initialCapacity = 4)
        val t = List(3) { IdTask(it) } // distinct objects (a non-capturing lambda would be one instance)
        t.forEach(d::push)
        d.popNewestIf(t[1], SameTask) shouldBe null // not the newest: untouched
        d.size() shouldBe 3
        d.popNewestIf(t[2], SameTask) shouldBeSameInstanceAs t[2]
        d.popNewestIf(t[1], SameTask) shouldBeSameInstanceAs t[1]
        d.steal().taskOrNull shouldBeSameInstanceAs t[0]
        d.popNewestIf(t[0], SameTask) shouldBe null // empty: a stale slot is refused
    }
})
