package dev.stealing

import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldBeEmpty
import io.kotest.matchers.collections.shouldHaveSize
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.string.shouldNotContain
import io.kotest.matchers.string.shouldStartWith
import io.kotest.matchers.types.shouldBeInstanceOf
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Job
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.yield
import java.lang.reflect.Modifier
import java.util.concurrent.CancellationException
import java.util.concurrent.RejectedExecutionException
import java.util.concurrent.atomic.AtomicBoolean
import java.util.concurrent.atomic.AtomicReference

/** The edges of the public API (issue 36): counters that count what they say, errors that name the public pool and type. */
class ApiEdgesSpec : FunSpec({
    test("stats().forks counts Java forks too: from outside the pool and from its workers") {
        fun fib(pool: StealingDispatcher, n: Int): Int {
            if (n < 2) return n
            val left = pool.fork { fib(pool, n - 1) }
            return fib(pool, n - 2) + left.join()
        }
        StealingDispatcher(2, "java-forks").use { pool ->
            pool.stats().forks shouldBe 0L
            pool.fork { fib(pool, 10) }.join() shouldBe 55
            // One fork per inner node of fib(10) (fib(11) - 1 = 88), plus the one from outside.
            pool.stats().forks shouldBe 89L
        }
    }

    test("ForkedTask.fork: Java forks onto the calling worker's pool without the pool; elsewhere a clear IllegalStateException") {
        StealingDispatcher(2, "static-fork").use { pool ->
            pool.fork { JavaApi.fibHere(12) }.join() shouldBe 144L
            pool.stats().forks shouldBe 233L // fib(13) - 1 inner nodes, plus the fork from outside
            val nested = pool.fork { ForkedTask.fork { Thread.currentThread().name }.join() }.join()
            nested shouldStartWith "static-fork-worker-"
        }
        val e = shouldThrow<IllegalStateException> { ForkedTask.fork { 1 } }
        e.message shouldContain "is not a worker of a StealingDispatcher"
        e.message shouldContain "pool.fork(task)"
        e.message shouldContain "StealingDispatcher.getShared().fork(task)"
        // A worker of another pool forks onto its own pool.
        StealingDispatcher(1, "other").use { other ->
            other.fork { ForkedTask.fork { Thread.currentThread().name }.join() }.join() shouldStartWith "other-worker-"
        }
    }

    test("a coroutine launched on a closed pool is cancelled, the rejection naming the pool as the cause (kotlinx's rule)") {
        val pool = StealingDispatcher(1, "my-pool")
        pool.close()
        for (target in listOf(pool, pool.affinity("key"))) {
            val ran = AtomicBoolean()
            val job = CoroutineScope(Job()).launch(target) { ran.set(true) }
            val completion = AtomicReference<Throwable?>()
            job.invokeOnCompletion { completion.set(it) }
            runBlocking { job.join() }
            ran.get() shouldBe false
            job.isCancelled shouldBe true
            val cancellation = completion.get().shouldBeInstanceOf<CancellationException>()
            cancellation.message shouldBe "The task was rejected: StealingDispatcher 'my-pool' is closed"
            val cause = cancellation.cause.shouldBeInstanceOf<RejectedExecutionException>()
            cause.message shouldBe "StealingDispatcher 'my-pool' is closed"
        }
    }

    test("a yield on a pool stopped meanwhile: the rejection names the pool") {
        val pool = StealingDispatcher(1, "yield-pool")
        val job = CoroutineScope(Job()).launch(pool) {
            pool.executor.shutdownNow() // from a task: a worker's own dispatches are refused from now on
            yield()
        }
        val completion = AtomicReference<Throwable?>()
        job.invokeOnCompletion { completion.set(it) }
        runBlocking { job.join() }
        job.isCancelled shouldBe true
        completion.get()?.cause?.message shouldBe "StealingDispatcher 'yield-pool' is closed"
    }

    test("a fair queue on a closed pool is refused with IllegalStateException naming the pool") {
        val pool = StealingDispatcher(1, "closed-fair")
        pool.close()
        shouldThrow<IllegalStateException> { pool.fairQueue("late") }.message shouldBe
            "StealingDispatcher 'closed-fair' is closed: cannot create fair queue late"
        pool.stats().fairQueues.shouldBeEmpty()
    }

    test("the executor of a closed pool names the pool in its rejection") {
        val pool = StealingDispatcher(1, "closed-exec")
        pool.close()
        shouldThrow<RejectedExecutionException> { pool.executor.execute { } }.message shouldContain
            "StealingDispatcher 'closed-exec' is shut down"
        shouldThrow<RejectedExecutionException> { pool.affinityExecutor(1).execute { } }.message shouldContain
            "StealingDispatcher 'closed-exec' is shut down"
    }

    test("shared pool: Java sees one name, StealingDispatcher.getShared(); the companion Default offers Java no second API") {
        val javaVisible = StealingDispatcher.Default::class.java.declaredMethods
            .filter { Modifier.isPublic(it.modifiers) && !it.isSynthetic && !Modifier.isStatic(it.modifiers) }
            .map { it.name }.toSet()
        // What Java could call on StealingDispatcher.Default besides CoroutineDispatcher's own methods.
        (javaVisible intersect setOf("fork", "stats", "fairQueue", "affinity", "affinityExecutor", "getParallelism", "getExecutor"))
            .shouldBeEmpty()
        JavaApi.shared() shouldBe StealingDispatcher.shared
    }

    test("null arguments from Java: the NullPointerException names the public type and method, never the implementation") {
        StealingDispatcher(1, "nulls").use { pool ->
            val messages = JavaNullMessages.of(pool.executor)
            messages shouldHaveSize 15
            for (m in messages) {
                m shouldContain "StealingExecutorService."
                m shouldNotContain "PoolExecutor"
            }
        }
    }
})
