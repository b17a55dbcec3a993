package dev.stealing

import dev.stealing.testsupport.eventually
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.longs.shouldBeGreaterThanOrEqual
import io.kotest.matchers.shouldBe
import java.time.Duration
import java.util.concurrent.CountDownLatch
import java.util.concurrent.ForkJoinPool
import java.util.concurrent.TimeUnit.SECONDS
import java.util.concurrent.atomic.AtomicBoolean
import java.util.concurrent.atomic.AtomicInteger
import java.util.concurrent.locks.LockSupport
import kotlin.concurrent.thread

/*
 * The stats() counters of a StealingDispatcher: executed and failed never decrease, and still
 * count the tasks of an extra thread after it retires.
 *
 * Every wait is bounded and every pool is closed after its scenario, so a violation fails the test
 * instead of hanging the build.
 */

/** Takes stats() snapshots and records any decrease of executed or failed between successive ones. */
private class StatsSampler(private val d: StealingDispatcher) {
    private var lastExecuted = -1L
    private var lastFailed = -1L
    private val violations = ArrayList<String>()
    private val stop = AtomicBoolean()
    private val thread = thread(isDaemon = true, name = "stats-sampler") {
        while (!stop.get()) {
            sample()
            LockSupport.parkNanos(200_000) // pacing only
        }
    }

    /** One snapshot, compared with the previous one (under the lock: snapshots are compared in the order taken). */
    @Synchronized
    fun sample(): StealingStats {
        val s = d.stats()
        if (s.executed < lastExecuted && violations.size < 10) violations += "executed went from $lastExecuted to ${s.executed}"
        if (s.failed < lastFailed && violations.size < 10) violations += "failed went from $lastFailed to ${s.failed}"
        lastExecuted = s.executed
        lastFailed = s.failed
        return s
    }

    fun stop() {
        stop.set(true)
        thread.join(10_000)
    }

    @Synchronized
    fun violations(): List<String> = ArrayList(violations)
}

/**
 * On a pool of 1 with keepAlive 50 ms: the core worker waits inside managedBlock, so the [tasks]
 * tasks made by [task] and submitted from outside run on an injected extra thread; each counts
 * down [done] (or its failure reaches the handler, which does). Then the blocker is released and
 * this waits until the extra thread retired, sampling stats() all along.
 */
private fun runOnExtraThreadUntilItRetires(d: StealingDispatcher, sampler: StatsSampler, tasks: Int, task: (CountDownLatch) -> Runnable, done: CountDownLatch) {
    val inBlock = CountDownLatch(1)
    val release = CountDownLatch(1)
    val blocker = d.executor.submit(Runnable {
        StealingDispatcher.managedBlock(object : ForkJoinPool.ManagedBlocker {
            override fun block(): Boolean {
                inBlock.countDown()
                release.await()
                return true
            }

            override fun isReleasable(): Boolean = release.count == 0L
        })
    })
    try {
        inBlock.await(10, SECONDS) shouldBe true
        repeat(tasks) { d.executor.execute(task(done)) }
        sampler.sample()
        done.await(60, SECONDS) shouldBe true
        sampler.sample()
    } finally {
        release.countDown()
    }
    blocker.get(10, SECONDS)
    withClue("an extra thread was injected (precondition)") { (sampler.sample().injectedThreads >= 1) shouldBe true }
    withClue("the extra thread retired (precondition)") {
        eventually(30_000) { sampler.sample().retiredThreads >= 1 } shouldBe true
    }
    repeat(20) { sampler.sample() } // a few more after the retirement
}

class ExecutorStatsSpec : FunSpec({

    test("stats().executed never decreases and still counts the tasks of an extra thread after it retires") {
        StealingDispatcher(1, "stats-executed", StealingOptions(keepAlive = Duration.ofMillis(50))).use { d ->
            val sampler = StatsSampler(d)
            val last = try {
                runOnExtraThreadUntilItRetires(d, sampler, 20_000, { done -> Runnable { done.countDown() } }, CountDownLatch(20_000))
                sampler.sample()
            } finally {
                sampler.stop()
            }
            withClue("successive snapshots") { sampler.violations() shouldBe emptyList() }
            last.executed shouldBeGreaterThanOrEqual 20_001L
        }
    }

    test("stats().failed never decreases and still equals the exception handler's count after an extra thread retires") {
        val handled = AtomicInteger()
        val failures = CountDownLatch(1_000)
        val options = StealingOptions(
            keepAlive = Duration.ofMillis(50),
            exceptionHandler = { _, _ ->
                handled.incrementAndGet()
                failures.countDown()
            },
        )
        StealingDispatcher(1, "stats-failed", options).use { d ->
            val sampler = StatsSampler(d)
            val last = try {
                runOnExtraThreadUntilItRetires(d, sampler, 1_000, { Runnable { throw IllegalStateException("expected") } }, failures)
                sampler.sample()
            } finally {
                sampler.stop()
            }
            withClue("successive snapshots") { sampler.violations() shouldBe emptyList() }
            handled.get() shouldBe 1_000
            last.failed shouldBe handled.get().toLong()
        }
    }
})
