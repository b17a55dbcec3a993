package dev.stealing

import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.longs.shouldBeGreaterThan
import io.kotest.matchers.longs.shouldBeGreaterThanOrEqual
import io.kotest.matchers.longs.shouldBeLessThanOrEqual
import java.time.Duration
import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicLong

/** The stated bound: unmarked blocking is noticed within one `starvationInterval` of its start. */
private const val INTERVAL_MS = 200L

/**
 * Allowance for the monitor's own wake-up and the extra thread's start on a busy machine. Below
 * one interval, so a detection that takes two looks of a whole interval each (the bound of
 * 2I-3I before) cannot pass.
 */
private const val SLACK_MS = 150L

/**
 * One round on a fresh one-worker pool: a task blocks without marking (a latch: WAITING) while a
 * second task waits in the queue; only a presumption of blocking can start a thread for it.
 * Returns the time from the first task's block to the second task's start, in ms.
 */
private fun detectionDelayMs(round: Int): Long {
    val options = StealingOptions(starvationInterval = Duration.ofMillis(INTERVAL_MS))
    return StealingDispatcher(1, "detection-$round", options).use { d ->
        val release = CountDownLatch(1)
        val blocking = CountDownLatch(1)
        val blockedAt = AtomicLong()
        val secondAt = AtomicLong()
        d.executor.execute {
            blockedAt.set(System.nanoTime())
            blocking.countDown()
            release.await(30, TimeUnit.SECONDS)
        }
        blocking.await(10, TimeUnit.SECONDS)
        val second = d.executor.submit {
            secondAt.set(System.nanoTime())
            release.countDown()
        }
        second.get(30, TimeUnit.SECONDS) // a hang (detection broken) fails here
        d.stats().presumedBlocked shouldBeGreaterThan 0L
        (secondAt.get() - blockedAt.get()) / 1_000_000
    }
}

class StarvationDetectionSpec : FunSpec({
    test("unmarked blocking is noticed within one starvationInterval of its start") {
        // The best of three rounds, so one round that a busy machine delayed does not decide.
        val delays = List(3) { detectionDelayMs(it) }
        delays.min() shouldBeLessThanOrEqual INTERVAL_MS + SLACK_MS
    }

    test("presumptions of blocking are paced: at most one per starvationInterval, even with every worker blocked at once") {
        // Four workers block without marking at once, with four more such tasks queued: each
        // presumption starts a thread that takes one and blocks too. n presumptions are at least
        // n - 1 intervals apart, so by any moment t after the start at most t / I + 1 were made.
        // A late monitor (a busy machine) makes fewer, never more: the bound holds under load.
        // Without the pacing the first look presumes all four workers at once.
        val interval = 100L
        val options = StealingOptions(starvationInterval = Duration.ofMillis(interval), keepAlive = Duration.ofSeconds(30))
        StealingDispatcher(4, "paced", options).use { d ->
            val release = CountDownLatch(1)
            try {
                val start = System.nanoTime()
                repeat(8) { d.executor.execute { release.await(30, TimeUnit.SECONDS) } }
                val deadline = start + TimeUnit.SECONDS.toNanos(20)
                var presumed = 0L
                while (presumed < 4 && System.nanoTime() - deadline < 0) {
                    presumed = d.stats().presumedBlocked
                    val elapsedMs = (System.nanoTime() - start) / 1_000_000 // read after the count
                    withClue("$presumed presumptions $elapsedMs ms after the start") {
                        presumed shouldBeLessThanOrEqual elapsedMs / interval + 1
                    }
                    Thread.sleep(5)
                }
                presumed shouldBeGreaterThanOrEqual 4L // made at all: the bound above is not vacuous
            } finally {
                release.countDown()
            }
        }
    }
})
