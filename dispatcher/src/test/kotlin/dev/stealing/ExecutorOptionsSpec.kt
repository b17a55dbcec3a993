package dev.stealing

import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import java.time.Duration
import java.util.concurrent.Callable
import java.util.concurrent.TimeUnit.SECONDS

/*
 * The limits of StealingOptions: an unbounded starvationInterval is accepted, an
 * initialDequeCapacity of 2^30 is rejected.
 */

class ExecutorOptionsSpec : FunSpec({

    test("StealingOptions accepts starvationInterval = Duration.ofSeconds(Long.MAX_VALUE), and a pool with it runs tasks") {
        val options = StealingOptions(starvationInterval = Duration.ofSeconds(Long.MAX_VALUE))
        StealingDispatcher(1, "huge-interval", options).use { d ->
            d.executor.submit(Callable { 42 }).get(10, SECONDS) shouldBe 42
        }
        StealingDispatcher(1, "huge-interval-copy", StealingOptions.DEFAULT.withStarvationInterval(Duration.ofSeconds(Long.MAX_VALUE))).use { d ->
            d.fork { 43 }.get(10, SECONDS) shouldBe 43
        }
    }

    test("StealingOptions rejects initialDequeCapacity = 2^30 with IllegalArgumentException naming it") {
        shouldThrow<IllegalArgumentException> { StealingOptions(initialDequeCapacity = 1 shl 30) }.message shouldContain "initialDequeCapacity"
        shouldThrow<IllegalArgumentException> { StealingOptions.DEFAULT.withInitialDequeCapacity(1 shl 30) }.message shouldContain "initialDequeCapacity"
    }
})
