package dev.stealing

import dev.stealing.testsupport.stressMultiplier
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger
import java.util.concurrent.atomic.AtomicIntegerArray
import kotlin.concurrent.thread

/**
 * Exactly once: tasks from several outside producers, each spawning a random tree of children
 * from inside the pool (local pushes, stolen by others), are each run exactly once.
 */
class ExactlyOnceSpec : FunSpec({
    test("random spawn trees from outside producers: every task runs exactly once") {
        val producers = 3
        val roots = 2_000 * stressMultiplier
        val treeSize = 100
        val total = producers * roots * treeSize
        val runs = AtomicIntegerArray(total)
        val remaining = CountDownLatch(total)
        val nextId = AtomicInteger()
        StealingDispatcher(parallelism = 4, name = "exactly-once", StealingOptions(initialDequeCapacity = 2)).use { d ->
            val ex = d.executor
            // A task with a budget of `size` tasks: runs itself and splits the rest among children.
            fun spawn(size: Int): Runnable = Runnable {
                val id = nextId.getAndIncrement()
                runs.incrementAndGet(id)
                remaining.countDown()
                var left = size - 1
                while (left > 0) {
                    val child = 1 + (id * 31 + left) % left
                    ex.execute(spawn(child))
                    left -= child
                }
            }
            val ps = List(producers) { thread { repeat(roots) { ex.execute(spawn(treeSize)) } } }
            ps.forEach { it.join() }
            remaining.await(120, TimeUnit.SECONDS) shouldBe true
            val stats = d.stats()
            stats.executed shouldBe total.toLong()
            (stats.steals > 0) shouldBe true
        }
        for (i in 0 until total) if (runs[i] != 1) error("task $i ran ${runs[i]} times")
    }
})
