package dev.stealing

import io.kotest.assertions.throwables.shouldThrow
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.types.shouldBeInstanceOf
import io.kotest.matchers.types.shouldBeSameInstanceAs
import java.io.IOException
import java.util.concurrent.Callable
import java.util.concurrent.CountDownLatch
import java.util.concurrent.ExecutionException
import java.util.concurrent.TimeUnit.MILLISECONDS
import java.util.concurrent.TimeUnit.SECONDS
import java.util.concurrent.TimeoutException
import java.util.concurrent.atomic.AtomicInteger

/*
 * The submit, invokeAll and invokeAny contracts of StealingDispatcher.executor (an ExecutorService
 * whose submit() returns ForkedTask): results and failures in the futures, empty and null
 * arguments, and timed invokeAll / invokeAny. Where the JDK has the same contract, the scenario
 * runs first on the JDK class named in the test title (ThreadPoolExecutor for
 * Future/ExecutorService, ForkJoinPool for fork), as the reference: a failure there means the test
 * is wrong, not the pool. Then the same scenario, with the same assertions, runs on a
 * StealingDispatcher.
 *
 * Every wait is bounded, every gate is released in a finally, and every pool is shut down and
 * awaited (bounded) after its scenario, so a contract violation fails the test instead of hanging
 * the build.
 */

class ExecutorInvokeSpec : FunSpec({

    // ---- timed invokeAll / invokeAny --------------------------------------------------------

    test("timed invokeAll whose timeout runs out while it waits never throws IllegalArgumentException; every future is done, either completed or cancelled (AbstractExecutorService)") {
        onJdkThenOurs(threadPool(2), stealing(2, "invoke-all-timed")) { s ->
            val tasks = List(2) { i -> Callable { Thread.sleep(5); i } }
            repeat(200) { round ->
                val futures = s.executor.invokeAll(tasks, 5, MILLISECONDS)
                futures.size shouldBe 2
                futures.forEachIndexed { i, f ->
                    withClue("round $round, task $i") {
                        f.isDone shouldBe true
                        if (!f.isCancelled) f.get() shouldBe i
                    }
                }
            }
        }
    }

    test("timed invokeAny whose tasks do not finish in time throws TimeoutException, also with a zero or negative timeout (AbstractExecutorService)") {
        onJdkThenOurs(threadPool(2), stealing(2, "invoke-any-timed")) { s ->
            val gate = CountDownLatch(1)
            try {
                val tasks = List(2) { i -> Callable { gate.await(); i } }
                withClue("20 ms") { shouldThrow<TimeoutException> { s.executor.invokeAny(tasks, 20, MILLISECONDS) } }
                withClue("0") { shouldThrow<TimeoutException> { s.executor.invokeAny(tasks, 0, MILLISECONDS) } }
                withClue("-1 ms") { shouldThrow<TimeoutException> { s.executor.invokeAny(tasks, -1, MILLISECONDS) } }
            } finally {
                gate.countDown()
            }
        }
    }

    // ---- submit, invokeAll and invokeAny ----------------------------------------------------

    test("invokeAll of an empty collection returns an empty list, timed or not; invokeAny of one throws IllegalArgumentException (AbstractExecutorService)") {
        onJdkThenOurs(threadPool(1), stealing(1, "empty")) { s ->
            s.executor.invokeAll(emptyList<Callable<Int>>()) shouldBe emptyList()
            s.executor.invokeAll(emptyList<Callable<Int>>(), 1, SECONDS) shouldBe emptyList()
            shouldThrow<IllegalArgumentException> { s.executor.invokeAny(emptyList<Callable<Int>>()) }
            shouldThrow<IllegalArgumentException> { s.executor.invokeAny(emptyList<Callable<Int>>(), 1, SECONDS) }
        }
    }

    test("a null task or collection throws NullPointerException from execute, submit, invokeAll and invokeAny (ThreadPoolExecutor)") {
        onJdkThenOurs(threadPool(1), stealing(1, "nulls")) { s ->
            val ex = s.executor
            withClue("execute(null)") { shouldThrow<NullPointerException> { ex.execute(null) } }
            withClue("submit(null as Runnable)") { shouldThrow<NullPointerException> { ex.submit(null as Runnable?) } }
            withClue("submit(null as Runnable, result)") { shouldThrow<NullPointerException> { ex.submit(null as Runnable?, 1) } }
            withClue("submit(null as Callable)") { shouldThrow<NullPointerException> { ex.submit(null as Callable<Int>?) } }
            withClue("invokeAll(null)") { shouldThrow<NullPointerException> { ex.invokeAll(null as Collection<Callable<Int>>?) } }
            withClue("invokeAll(null, 1 s)") { shouldThrow<NullPointerException> { ex.invokeAll(null as Collection<Callable<Int>>?, 1, SECONDS) } }
            withClue("invokeAll([task, null])") { shouldThrow<NullPointerException> { ex.invokeAll(listOf(Callable { 1 }, null)) } }
            withClue("invokeAny(null)") { shouldThrow<NullPointerException> { ex.invokeAny(null as Collection<Callable<Int>>?) } }
            withClue("invokeAny([null])") { shouldThrow<NullPointerException> { ex.invokeAny(listOf<Callable<Int>?>(null)) } }
            // The pool is still usable.
            ex.submit(Callable { 3 }).get(10, SECONDS) shouldBe 3
        }
    }

    test("get of a task that threw throws ExecutionException whose cause is the exception itself, checked or unchecked (FutureTask)") {
        onJdkThenOurs(threadPool(1), stealing(1, "get-failed")) { s ->
            val unchecked = IllegalStateException("unchecked")
            val checked = IOException("checked")
            val error = AssertionError("error")
            val f1 = s.executor.submit(Callable<Int> { throw unchecked })
            val f2 = s.executor.submit(Callable<Int> { throw checked })
            val f3 = s.executor.submit(Runnable { throw error })
            shouldThrow<ExecutionException> { f1.get() }.cause shouldBeSameInstanceAs unchecked
            shouldThrow<ExecutionException> { f1.get(10, SECONDS) }.cause shouldBeSameInstanceAs unchecked
            shouldThrow<ExecutionException> { f2.get(10, SECONDS) }.cause shouldBeSameInstanceAs checked
            shouldThrow<ExecutionException> { f3.get(10, SECONDS) }.cause shouldBeSameInstanceAs error
            f1.isDone shouldBe true
            f1.isCancelled shouldBe false
        }
    }

    test("submit(Runnable, result) yields the result and submit(Runnable) yields null (AbstractExecutorService)") {
        onJdkThenOurs(threadPool(1), stealing(1, "submit-runnable")) { s ->
            val ran = AtomicInteger()
            s.executor.submit(Runnable { ran.incrementAndGet() }, "result").get(10, SECONDS) shouldBe "result"
            s.executor.submit(Runnable { ran.incrementAndGet() }).get(10, SECONDS) shouldBe null
            ran.get() shouldBe 2
        }
    }

    test("invokeAll returns when every task is done, with the futures in the order of the tasks and each failure in its own future (AbstractExecutorService)") {
        onJdkThenOurs(threadPool(2), stealing(2, "invoke-all")) { s ->
            val tasks = List(20) { i ->
                Callable {
                    if (i % 3 == 0) Thread.sleep(2) // some finish later than others
                    if (i % 5 == 4) throw IllegalStateException("task $i")
                    i
                }
            }
            for (timed in listOf(false, true)) {
                val futures = if (timed) s.executor.invokeAll(tasks, 60, SECONDS) else s.executor.invokeAll(tasks)
                withClue(if (timed) "timed" else "untimed") {
                    futures.size shouldBe 20
                    futures.forEachIndexed { i, f ->
                        f.isDone shouldBe true
                        f.isCancelled shouldBe false
                        if (i % 5 == 4) {
                            shouldThrow<ExecutionException> { f.get(0, SECONDS) }.cause?.message shouldBe "task $i"
                        } else {
                            f.get(0, SECONDS) shouldBe i
                        }
                    }
                }
            }
        }
    }

    test("invokeAny returns the result of a task that succeeded although others failed, and throws ExecutionException when all fail (AbstractExecutorService)") {
        onJdkThenOurs(threadPool(2), stealing(2, "invoke-any")) { s ->
            val failing = Callable<Int> { throw IllegalStateException("fails") }
            s.executor.invokeAny(listOf(failing, failing, Callable { 7 }, failing)) shouldBe 7
            s.executor.invokeAny(listOf(failing, Callable { 8 }), 60, SECONDS) shouldBe 8
            shouldThrow<ExecutionException> { s.executor.invokeAny(listOf(failing, failing)) }
                .cause.shouldBeInstanceOf<IllegalStateException>()
            shouldThrow<ExecutionException> { s.executor.invokeAny(listOf(failing, failing), 60, SECONDS) }
                .cause.shouldBeInstanceOf<IllegalStateException>()
        }
    }
})
