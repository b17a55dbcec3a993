package dev.stealing

import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldBeEmpty
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.string.shouldMatch
import io.kotest.matchers.string.shouldNotContain
import io.kotest.matchers.string.shouldStartWith
import io.kotest.matchers.types.shouldBeSameInstanceAs
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import java.util.concurrent.Callable
import java.util.concurrent.CompletableFuture
import java.util.concurrent.TimeUnit.SECONDS
import kotlin.time.Duration
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds

/** The public API from Kotlin and (through JavaApi.java) from Java: no casts, typed values, clear errors. */
class ApiErgonomicsSpec : FunSpec({
    test("executor: submit and invokeAll give ForkedTasks, joined without a cast (Kotlin)") {
        StealingDispatcher(2, "typed").use { d ->
            val executor: StealingExecutorService = d.executor
            executor.submit<Int> { 1 }.join() shouldBe 1
            executor.submit { 1 }.join() shouldBe null // a bare lambda is a Runnable in Kotlin (as for ExecutorService)
            executor.submit(Callable { 2 }).join() shouldBe 2
            executor.submit(Runnable { }).join() shouldBe null
            executor.submit(Runnable { }, "r").join() shouldBe "r"
            executor.invokeAll(listOf(Callable { 3 }, Callable { 4 })).map { it.join() } shouldBe listOf(3, 4)
            executor.invokeAll(listOf(Callable { 5 }), 10, SECONDS).map { it.join() } shouldBe listOf(5)
            CompletableFuture.supplyAsync({ 6 }, executor).get(10, SECONDS) shouldBe 6
            StealingDispatcher.executor.submit<Int> { 7 }.join() shouldBe 7
        }
    }

    test("executor: submit and invokeAll give ForkedTasks, joined without a cast (Java)") {
        StealingDispatcher(2, "typed-java").use { d -> JavaApi.submitAndJoin(d) shouldBe 41 }
        JavaApi.closeExecutor() shouldBe true
    }

    test("executor: close() is declared on the executor type (no AutoCloseable cast), and refused on the shared pool") {
        val d = StealingDispatcher(1, "executor-close")
        d.executor.close()
        d.executor.isTerminated shouldBe true
        shouldThrow<UnsupportedOperationException> { StealingDispatcher.shared.executor.close() }
    }

    test("shared: the shared pool as a StealingDispatcher, with parallelism; it cannot be closed") {
        val shared: StealingDispatcher = StealingDispatcher.shared
        JavaApi.shared() shouldBeSameInstanceAs shared
        shared.parallelism shouldBe Runtime.getRuntime().availableProcessors()
        StealingDispatcher.parallelism shouldBe shared.parallelism
        JavaApi.sharedParallelism() shouldBe shared.parallelism
        shouldThrow<UnsupportedOperationException> { shared.close() }
        shouldThrow<UnsupportedOperationException> { shared.executor.shutdown() }
        shouldThrow<UnsupportedOperationException> { shared.executor.shutdownNow() }
        // The same pool as withContext(StealingDispatcher) { }: same threads, same counters.
        val a = runBlocking { withContext(StealingDispatcher) { Thread.currentThread().name } }
        val b = runBlocking { withContext(shared) { Thread.currentThread().name } }
        a.substringBefore("-worker-") shouldBe b.substringBefore("-worker-")
        shared.stats().name shouldBe StealingDispatcher.stats().name
        shared.fork { 8 }.join() shouldBe 8
        shared.stats().state shouldBe StealingStats.State.RUNNING
    }

    test("options: kotlin.time durations from Kotlin, java.time durations from Java, same meaning") {
        StealingOptions(keepAlive = 30.seconds).keepAlive shouldBe java.time.Duration.ofSeconds(30)
        StealingOptions(keepAlive = 30.seconds).starvationInterval shouldBe StealingOptions.DEFAULT.starvationInterval
        StealingOptions(starvationInterval = 50.milliseconds).starvationInterval shouldBe java.time.Duration.ofMillis(50)
        StealingOptions(starvationInterval = 50.milliseconds).keepAlive shouldBe StealingOptions.DEFAULT.keepAlive
        StealingOptions(daemon = false, keepAlive = 2.seconds, starvationInterval = Duration.ZERO).let {
            it.daemon shouldBe false
            it.keepAlive shouldBe java.time.Duration.ofSeconds(2)
            it.starvationInterval shouldBe java.time.Duration.ZERO
        }
        StealingOptions(keepAlive = java.time.Duration.ofSeconds(3), starvationInterval = 1.seconds).keepAlive shouldBe
            java.time.Duration.ofSeconds(3)
        StealingOptions(keepAlive = java.time.Duration.ofSeconds(30)).keepAlive shouldBe java.time.Duration.ofSeconds(30)
        StealingOptions.DEFAULT.withKeepAlive(4.seconds).keepAlive shouldBe java.time.Duration.ofSeconds(4)
        StealingOptions.DEFAULT.withStarvationInterval(Duration.ZERO).starvationInterval shouldBe java.time.Duration.ZERO
        for (o in JavaApi.options()) {
            o.keepAlive shouldBe java.time.Duration.ofSeconds(30)
            o.starvationInterval shouldBe java.time.Duration.ZERO
        }
        shouldThrow<IllegalArgumentException> { StealingOptions(keepAlive = (-1).seconds) }.message shouldBe
            "keepAlive must be positive, was PT-1S"
        // INFINITE means never: detection off, as for a java.time duration over 70 years.
        StealingDispatcher(1, "infinite", StealingOptions(keepAlive = Duration.INFINITE, starvationInterval = Duration.INFINITE)).use { d ->
            d.pool.monitor shouldBe null
            d.pool.keepAliveNanos shouldBe Long.MAX_VALUE
            d.executor.submit<Int> { 1 }.join() shouldBe 1
        }
        StealingDispatcher(1, "zero-interval", StealingOptions(starvationInterval = Duration.ZERO)).use { d ->
            d.pool.monitor shouldBe null
        }
    }

    test("toString: the dispatcher and its limitedParallelism views are short, not the stats line") {
        StealingDispatcher(2, "short").use { d ->
            d.executor.submit { 1 }.join()
            d.toString() shouldMatch Regex("""short\[parallelism = 2, threads = \d, queued = \d+]""")
            val view = d.limitedParallelism(1)
            view.toString() shouldContain "short[parallelism = 2"
            view.toString() shouldNotContain "executed"
            view.toString() shouldNotContain "steals"
            (view.toString().length < 80) shouldBe true
            StealingDispatcher.shared.toString() shouldMatch
                Regex("""StealingDispatcher\.Default\[parallelism = \d+, threads = \d+, queued = \d+]""")
            StealingDispatcher.toString() shouldBe "StealingDispatcher.Default"
        }
    }

    test("stats: every figure in toString is labelled with its property name; steals and attempts apart") {
        StealingDispatcher(2, "labelled").use { d ->
            repeat(100) { i -> d.executor.submit { i } }
            d.executor.submit { 0 }.join()
            val s = d.stats()
            val text = s.toString()
            text shouldContain "steals=${s.steals}, stealAttempts="
            for (label in listOf(
                "name", "state", "parallelism", "threads", "idleThreads", "blockedThreads", "maxThreads",
                "injectedThreads", "retiredThreads", "presumedBlocked", "executed", "localPops", "globalPops",
                "steals", "stealAttempts", "inlined", "helped", "blockedJoins", "parks", "unparks", "failed",
                "cancelled", "rejected", "queuedTasks", "globalQueueDepth", "workerQueueDepths", "affinityPops",
                "affinityQueueDepths", "forks", "forksInlined", "forksStolen", "fairQueues", "pinning",
            )) text shouldContain "$label="
            // No figure without a label: every value follows "label=".
            text.removePrefix("StealingStats(").removeSuffix(")").split(Regex(", (?=[a-zA-Z]+=)"))
                .filterNot { Regex("^[a-zA-Z]+=.*").matches(it) }.shouldBeEmpty()
            text shouldContain "state=RUNNING"
        }
    }

    test("stats: the run state is an enum through the whole life cycle") {
        val d = StealingDispatcher(1, "states")
        d.stats().state shouldBe StealingStats.State.RUNNING
        val gate = java.util.concurrent.CountDownLatch(1)
        d.executor.execute { gate.await() }
        d.executor.shutdown()
        d.stats().state shouldBe StealingStats.State.SHUTTING_DOWN
        gate.countDown()
        d.executor.awaitTermination(10, SECONDS) shouldBe true
        d.stats().state shouldBe StealingStats.State.TERMINATED
        val e = StealingDispatcher(1, "stopping")
        val gate2 = java.util.concurrent.CountDownLatch(1)
        val started = java.util.concurrent.CountDownLatch(1)
        e.executor.execute {
            started.countDown()
            while (true) {
                try {
                    gate2.await()
                    break
                } catch (e: InterruptedException) {
                    // shutdownNow's interrupt: keep waiting, or the worker could exit and the pool
                    // terminate before the state is read below (it did once, on a loaded machine)
                }
            }
        }
        started.await(10, SECONDS) shouldBe true // running, so shutdownNow cannot hand it back
        e.executor.shutdownNow()
        e.stats().state shouldBe StealingStats.State.STOPPING
        gate2.countDown()
        e.executor.awaitTermination(10, SECONDS) shouldBe true
        StealingStats.State.entries.map { it.name } shouldBe
            listOf("RUNNING", "SHUTTING_DOWN", "STOPPING", "TERMINATING", "TERMINATED")
    }

    test("stats: pinning is typed: mode, CPUs and reason") {
        StealingDispatcher(1, "unpinned-typed").use { d ->
            val p = d.stats().pinning
            p.mode shouldBe StealingStats.Pinning.Mode.OFF
            p.cpus.shouldBeEmpty()
            p.reason shouldBe null
            p.toString() shouldBe "off"
        }
    }

    test("names: a blank pool or fair-queue name is rejected, naming the parameter") {
        for (blank in listOf("", " ", "\t")) {
            shouldThrow<IllegalArgumentException> { StealingDispatcher(1, blank) }.message shouldBe
                "name must not be blank, was \"$blank\""
        }
        StealingDispatcher(1, "fair-names").use { d ->
            shouldThrow<IllegalArgumentException> { d.fairQueue(" ") }.message shouldBe "name must not be blank, was \" \""
            shouldThrow<IllegalArgumentException> { d.fairQueue("") }.message shouldBe "name must not be blank, was \"\""
            d.fairQueue().use { it.name shouldStartWith "fair-" }
            d.fairQueue("ok").use { it.name shouldBe "ok" }
        }
    }
})
