package dev.stealing

import dev.stealing.testsupport.spin
import dev.stealing.testsupport.stressMultiplier
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.booleans.shouldBeTrue
import io.kotest.matchers.shouldBe
import java.time.Duration
import java.util.concurrent.CancellationException
import java.util.concurrent.CountDownLatch
import java.util.concurrent.ScheduledExecutorService
import java.util.concurrent.ScheduledFuture
import java.util.concurrent.ScheduledThreadPoolExecutor
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger
import java.util.concurrent.atomic.AtomicIntegerArray

/** Tests where every worker is blocked in a task: no thread injection, or an extra thread would run what waits. */
private val noInjection = StealingOptions(starvationInterval = Duration.ZERO)

/** An executor a scenario runs on, with a [label] for failure messages. */
private class Pool(val label: String, val executor: ScheduledExecutorService, val dispatcher: StealingDispatcher?)

private fun stpe(): Pool = Pool("ScheduledThreadPoolExecutor(2) (reference)", ScheduledThreadPoolExecutor(2), null)

private fun stealing(name: String, options: StealingOptions = StealingOptions.DEFAULT): Pool {
    val d = StealingDispatcher(2, name, options)
    return Pool("StealingDispatcher(2, \"$name\")", d.executor, d)
}

/**
 * Runs [scenario] on `ScheduledThreadPoolExecutor(2)`, then on ours, and checks that each
 * observed [expected]. Each pool is stopped afterwards whatever happened (shutdownNow, then at
 * most 10 s for termination).
 */
private fun <T> sideBySide(ours: () -> Pool, expected: T, scenario: (Pool) -> T) {
    for (create in listOf(::stpe, ours)) {
        val pool = create()
        try {
            withClue(pool.label) { scenario(pool) shouldBe expected }
        } finally {
            pool.executor.shutdownNow()
            pool.executor.awaitTermination(10, TimeUnit.SECONDS)
        }
    }
}

/** A run that counts itself in [runs] at [i], tells [entered], then waits for [release] (interrupts do not end the wait). */
private fun blockingRun(runs: AtomicIntegerArray, i: Int, entered: CountDownLatch, release: CountDownLatch, interrupts: AtomicInteger) = Runnable {
    runs.incrementAndGet(i)
    entered.countDown()
    while (true) {
        try {
            if (!release.await(30, TimeUnit.SECONDS)) throw AssertionError("never released")
            break
        } catch (e: InterruptedException) {
            interrupts.incrementAndGet()
        }
    }
}

/** What a scenario saw of its two running periodic tasks ([0]: fixed rate, [1]: fixed delay). */
private data class RunningAtShutdown(
    val doneAtShutdown: List<Boolean>,
    val terminatedAtShutdown: Boolean,
    val handedBack: Int,
    val queuedCancelledAtShutdown: Boolean,
    val oneShotCancelledAtShutdown: Boolean,
    val terminated: Boolean,
    val cancelledAfter: List<Boolean>,
    val doneAfter: List<Boolean>,
    val runs: List<Int>,
    val oneShotRan: Boolean,
    val interrupted: Boolean,
)

/**
 * Two periodic tasks ([delay] ms initial delay, 1 ms period or delay) block inside their first
 * run; then `shutdown()` ([now]: `shutdownNow()`), then the runs are let go. A third periodic
 * task, an hour away, and a one-shot task (50 ms away; an hour for [now]) wait in the timers
 * meanwhile.
 */
private fun runningAtShutdown(ex: ScheduledExecutorService, delay: Long, now: Boolean): RunningAtShutdown {
    val runs = AtomicIntegerArray(2)
    val entered = CountDownLatch(2)
    val release = CountDownLatch(1)
    val interrupts = AtomicInteger()
    val periodic = listOf(
        ex.scheduleAtFixedRate(blockingRun(runs, 0, entered, release, interrupts), delay, 1, TimeUnit.MILLISECONDS),
        ex.scheduleWithFixedDelay(blockingRun(runs, 1, entered, release, interrupts), delay, 1, TimeUnit.MILLISECONDS),
    )
    try {
        entered.await(30, TimeUnit.SECONDS).shouldBeTrue()
        val queued = ex.scheduleAtFixedRate({ }, 1, 1, TimeUnit.HOURS)
        val oneShotRan = CountDownLatch(1)
        // shutdownNow() hands it back: not due before it, even on a machine that stalls.
        val oneShot = ex.schedule(Runnable { oneShotRan.countDown() }, if (now) 3_600_000 else 50, TimeUnit.MILLISECONDS)
        val handedBack = if (now) ex.shutdownNow() else { ex.shutdown(); emptyList() }
        val doneAtShutdown = periodic.map { it.isDone }
        val terminatedAtShutdown = ex.isTerminated
        val queuedCancelled = queued.isCancelled
        val oneShotCancelled = oneShot.isCancelled
        release.countDown()
        val terminated = ex.awaitTermination(30, TimeUnit.SECONDS)
        periodic.forEach { f -> shouldThrow<CancellationException> { f.get(10, TimeUnit.SECONDS) } }
        return RunningAtShutdown(
            doneAtShutdown, terminatedAtShutdown, handedBack.size, queuedCancelled, oneShotCancelled, terminated,
            periodic.map { it.isCancelled }, periodic.map { it.isDone }, List(2) { runs.get(it) },
            oneShotRan.count == 0L, interrupts.get() > 0,
        )
    } finally {
        release.countDown()
    }
}

class PeriodicShutdownSpec : FunSpec({
    for (delay in listOf(0L, 1L)) {
        test("shutdown lets running periodic tasks end their run, then cancels them; queued ones at once (initial delay $delay ms), as ScheduledThreadPoolExecutor") {
            sideBySide(
                { stealing("periodic-running-$delay") },
                RunningAtShutdown(
                    doneAtShutdown = listOf(false, false), terminatedAtShutdown = false, handedBack = 0,
                    queuedCancelledAtShutdown = true, oneShotCancelledAtShutdown = false, terminated = true,
                    cancelledAfter = listOf(true, true), doneAfter = listOf(true, true), runs = listOf(1, 1),
                    oneShotRan = true, interrupted = false,
                ),
            ) { pool ->
                val result = runningAtShutdown(pool.executor, delay, now = false)
                pool.dispatcher?.let { it.pool.timers.periodicTasks.size shouldBe 0 }
                result
            }
        }

        test("shutdownNow interrupts running periodic tasks, hands back the queued ones and cancels the running ones after their run (initial delay $delay ms), as ScheduledThreadPoolExecutor") {
            sideBySide(
                { stealing("periodic-running-now-$delay") },
                RunningAtShutdown(
                    doneAtShutdown = listOf(false, false), terminatedAtShutdown = false, handedBack = 2,
                    queuedCancelledAtShutdown = false, oneShotCancelledAtShutdown = false, terminated = true,
                    cancelledAfter = listOf(true, true), doneAfter = listOf(true, true), runs = listOf(1, 1),
                    oneShotRan = false, interrupted = true,
                ),
            ) { pool -> runningAtShutdown(pool.executor, delay, now = true) }
        }
    }

    test("shutdown() after shutdownNow() leaves the periodic tasks it handed back uncancelled, as ScheduledThreadPoolExecutor") {
        val ticks = AtomicInteger()
        sideBySide({ stealing("now-then-shutdown") }, listOf(false, false, true)) { pool ->
            val ex = pool.executor
            val periodic = ex.scheduleAtFixedRate({ ticks.incrementAndGet() }, 1, 1, TimeUnit.HOURS)
            val oneShot = ex.schedule(Runnable { }, 1, TimeUnit.HOURS)
            val handedBack = ex.shutdownNow()
            handedBack.toSet() shouldBe setOf(periodic, oneShot)
            ex.shutdown()
            listOf(periodic.isCancelled, oneShot.isCancelled, ex.awaitTermination(30, TimeUnit.SECONDS)).also {
                // Ours runs a handed-back periodic task once (ScheduledThreadPoolExecutor cancels it).
                if (pool.dispatcher != null) {
                    handedBack.forEach { it.run() }
                    ticks.get() shouldBe 1
                    periodic.isCancelled.shouldBeTrue()
                }
            }
        }
    }

    test("a one-shot delayed task due while every worker is busy runs after shutdown, as ScheduledThreadPoolExecutor") {
        sideBySide({ stealing("one-shot-after-shutdown", noInjection) }, listOf(false, true, true)) { pool ->
            val ex = pool.executor
            val entered = CountDownLatch(2)
            val release = CountDownLatch(1)
            try {
                repeat(2) { ex.execute { entered.countDown(); release.await(30, TimeUnit.SECONDS) } }
                entered.await(30, TimeUnit.SECONDS).shouldBeTrue()
                val shutDownWhenRun = CountDownLatch(1)
                val oneShot = ex.schedule(Runnable { if (ex.isShutdown) shutDownWhenRun.countDown() }, 1, TimeUnit.MILLISECONDS)
                ex.shutdown()
                val cancelled = oneShot.isCancelled
                release.countDown()
                oneShot.get(30, TimeUnit.SECONDS)
                listOf(cancelled, shutDownWhenRun.count == 0L, ex.awaitTermination(30, TimeUnit.SECONDS))
            } finally {
                release.countDown()
            }
        }
    }

    test("shutdown racing the end of short periodic runs: every future cancelled once, at most the run under way ends after it, the pool terminates") {
        val rounds = 200 * stressMultiplier
        repeat(rounds) { round ->
            val d = StealingDispatcher(2, "periodic-race-$round")
            val ex = d.executor
            val runs = AtomicIntegerArray(4)
            val started = CountDownLatch(4)
            val periodic = List(4) { i ->
                val run = Runnable {
                    runs.incrementAndGet(i)
                    started.countDown()
                    spin(20_000)
                }
                if (i % 2 == 0) ex.scheduleAtFixedRate(run, 0, 10, TimeUnit.MICROSECONDS)
                else ex.scheduleWithFixedDelay(run, 0, 10, TimeUnit.MICROSECONDS)
            }
            started.await(30, TimeUnit.SECONDS).shouldBeTrue()
            ex.shutdown()
            // A run counts itself after it has started; one that started before the shutdown may count
            // itself after it: at most one per task.
            val atShutdown = List(4) { runs.get(it) }
            withClue("round $round") {
                ex.awaitTermination(30, TimeUnit.SECONDS).shouldBeTrue()
                periodic.forEachIndexed { i, f ->
                    f.isCancelled.shouldBeTrue()
                    f.cancel(false) shouldBe false // completed once, by the pool
                    (runs.get(i) - atShutdown[i] <= 1).shouldBeTrue()
                }
                d.pool.timers.periodicTasks.size shouldBe 0
                d.stats().pendingTimers.sum() shouldBe 0
            }
        }
    }
})
