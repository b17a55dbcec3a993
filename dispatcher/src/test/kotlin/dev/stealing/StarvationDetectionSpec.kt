package dev.stealing

import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.longs.shouldBeGreaterThan
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
})
