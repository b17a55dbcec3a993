package dev.stealing

import dev.stealing.project.fibInline
import dev.stealing.testsupport.eventually
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldBeEmpty
import io.kotest.matchers.doubles.shouldBeGreaterThan
import io.kotest.matchers.doubles.shouldBeGreaterThanOrEqual
import io.kotest.matchers.doubles.shouldBeLessThanOrEqual
import io.kotest.matchers.shouldBe
import io.micrometer.core.instrument.MeterRegistry
import io.micrometer.core.instrument.Tags
import io.micrometer.core.instrument.binder.BaseUnits
import io.micrometer.core.instrument.simple.SimpleMeterRegistry
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Job
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import java.time.Duration
import java.util.concurrent.CountDownLatch
import java.util.concurrent.RejectedExecutionException
import java.util.concurrent.TimeUnit

/** The meters of one pool in one registry, found by the `name` tag and the tags the test bound them with. */
private class Meters(private val registry: MeterRegistry, private val tags: Tags) {
    fun gauge(name: String): Double = registry.get(name).tags(tags).gauge().value()
    fun counter(name: String): Double = registry.get(name).tags(tags).functionCounter().count()
    fun fairQueue(queue: String): Double = registry.get("stealing.fair.queued").tags(tags).tag("queue", queue).gauge().value()
    fun fairQueues(): List<String> = registry.find("stealing.fair.queued").gauges().map { it.id.getTag("queue")!! }
}

/** [counter] read between two snapshots of the pool: it lies between their values of [stat]. */
private fun Meters.counterReads(pool: StealingDispatcher, name: String, stat: StealingStats.() -> Long) {
    val before = pool.stats().stat().toDouble()
    val read = counter(name)
    val after = pool.stats().stat().toDouble()
    withClue(name) {
        read shouldBeGreaterThanOrEqual before
        read shouldBeLessThanOrEqual after
    }
}

class StealingMetricsSpec : FunSpec({
    test("the executor meters carry Micrometer's names, units and the name tag, and count known work") {
        val failures = CountDownLatch(1)
        val pool = StealingDispatcher(2, "metered", StealingOptions(exceptionHandler = { _, _ -> failures.countDown() }))
        val registry = SimpleMeterRegistry()
        StealingMetrics(pool, Tags.of("app", "test")).bindTo(registry)
        val m = Meters(registry, Tags.of("name", "metered", "app", "test"))

        m.gauge("executor.pool.core") shouldBe 2.0
        m.gauge("executor.parallelism") shouldBe 2.0
        m.gauge("executor.pool.max") shouldBe pool.stats().maxThreads.toDouble()
        m.counter("executor.completed") shouldBe 0.0
        registry.get("executor.completed").functionCounter().id.baseUnit shouldBe BaseUnits.TASKS
        registry.get("executor.active").gauge().id.baseUnit shouldBe BaseUnits.THREADS
        registry.get("executor.queued").gauge().id.description shouldBe
            "The approximate number of tasks that are queued for execution"

        val done = CountDownLatch(1_000)
        repeat(1_000) { pool.executor.execute { done.countDown() } }
        done.await(10, TimeUnit.SECONDS) shouldBe true
        eventually(10_000) { pool.stats().executed == 1_000L } shouldBe true
        m.counter("executor.completed") shouldBe 1_000.0
        m.gauge("executor.pool.size") shouldBe pool.stats().threads.toDouble()

        pool.executor.execute { error("fails on purpose") }
        failures.await(10, TimeUnit.SECONDS) shouldBe true
        eventually(10_000) { m.counter("stealing.failed") == 1.0 } shouldBe true

        runBlocking { withContext(pool) { fibInline(20) } } shouldBe 6765 // the README's async + awaitInline fib
        eventually(10_000) { pool.stats().let { it.idleThreads == it.threads } } shouldBe true
        m.counter("stealing.inlined") shouldBeGreaterThan 0.0
        // A park is counted when its worker wakes: wake one of the idle workers with a task (a
        // searcher that yields its core may not have parked and woken before this point).
        val woken = CountDownLatch(1)
        pool.executor.execute { woken.countDown() }
        woken.await(10, TimeUnit.SECONDS) shouldBe true
        eventually(10_000) { m.counter("stealing.parks") > 0.0 } shouldBe true
        m.counterReads(pool, "stealing.inlined") { inlined }
        m.counterReads(pool, "executor.steals") { steals }
        m.counterReads(pool, "stealing.parks") { parks }
        m.gauge("stealing.threads.idle") shouldBe pool.stats().idleThreads.toDouble()
        m.gauge("executor.queued") shouldBe 0.0

        // Timers: one pending, one cancelled, one fired.
        val pending = pool.executor.schedule(Runnable { }, 1, TimeUnit.HOURS)
        m.gauge("stealing.timers.pending") shouldBe 1.0
        pending.cancel(false)
        m.gauge("stealing.timers.pending") shouldBe 0.0
        m.counter("stealing.timers.cancelled") shouldBe 1.0
        pool.executor.schedule(Runnable { }, 1, TimeUnit.MILLISECONDS).get(10, TimeUnit.SECONDS)
        m.counter("stealing.timers.fired") shouldBe 1.0
        m.counter("stealing.timers.stolen") shouldBe pool.stats().timersStolen.toDouble()

        pool.close()
        shouldThrow<RejectedExecutionException> { pool.executor.execute { } }
        m.counter("stealing.rejected") shouldBe 1.0
        m.gauge("executor.pool.size") shouldBe 0.0 // the meters still read a closed pool
    }

    test("blocked workers, injected and retired threads") {
        val pool = StealingDispatcher(2, "blocking", StealingOptions(keepAlive = Duration.ofMillis(100)))
        pool.use {
            val registry = SimpleMeterRegistry()
            StealingMetrics(pool).bindTo(registry)
            val m = Meters(registry, Tags.of("name", "blocking"))
            val arrived = CountDownLatch(3)
            val gate = CountDownLatch(1)
            val scope = CoroutineScope(Job())
            // Three marked waiters on two workers: the third runs only on an injected thread.
            repeat(3) { scope.launch(pool) { blocking { arrived.countDown(); gate.await() } } }
            arrived.await(10, TimeUnit.SECONDS) shouldBe true
            m.gauge("stealing.threads.blocked") shouldBe 3.0
            m.gauge("executor.active") shouldBeGreaterThanOrEqual 3.0
            // Every thread is blocked or idle once the injected ones found nothing more to do.
            eventually(10_000) { m.gauge("executor.running") == 0.0 } shouldBe true
            m.counter("stealing.threads.injected") shouldBeGreaterThanOrEqual 1.0
            gate.countDown()
            eventually(10_000) { pool.stats().let { it.threads == 2 && it.retiredThreads == it.injectedThreads } } shouldBe true
            m.gauge("stealing.threads.blocked") shouldBe 0.0
            m.counter("stealing.threads.retired") shouldBe m.counter("stealing.threads.injected")
            m.gauge("executor.pool.size") shouldBe 2.0
        }
    }

    test("a fair queue created after binding gets its depth gauge on the next read of executor.queued, and loses it once gone") {
        // No starvation detection: the two workers below wait unmarked on purpose.
        val pool = StealingDispatcher(2, "fair-metered", StealingOptions(starvationInterval = Duration.ZERO))
        pool.use {
            val registry = SimpleMeterRegistry()
            StealingMetrics(pool).bindTo(registry)
            val m = Meters(registry, Tags.of("name", "fair-metered"))
            m.fairQueues().shouldBeEmpty()

            val started = CountDownLatch(2)
            val release = CountDownLatch(1)
            repeat(2) { pool.executor.execute { started.countDown(); release.await() } }
            started.await(10, TimeUnit.SECONDS) shouldBe true
            val batch = pool.fairQueue("batch")
            repeat(5) { batch.executor.execute { } }
            m.fairQueues().shouldBeEmpty() // nothing has looked yet

            m.gauge("executor.queued") shouldBe 5.0
            m.fairQueues() shouldBe listOf("batch")
            m.fairQueue("batch") shouldBe 5.0
            m.gauge("executor.active") shouldBe 2.0
            m.gauge("executor.running") shouldBe 2.0
            m.gauge("stealing.threads.idle") shouldBe 0.0

            release.countDown()
            eventually(10_000) { m.fairQueue("batch") == 0.0 } shouldBe true
            batch.close()
            eventually(10_000) { pool.stats().fairQueues.isEmpty() } shouldBe true
            m.gauge("executor.queued") shouldBe 0.0
            m.fairQueues().shouldBeEmpty()
        }
    }
})
