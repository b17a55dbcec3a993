package dev.stealing

import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.shouldNotBe
import kotlin.time.Duration
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.toKotlinDuration

class OptionsSpec : FunSpec({
    test("bad arguments throw IllegalArgumentException naming the parameter and the value") {
        shouldThrow<IllegalArgumentException> { StealingDispatcher(0) }.message shouldBe "parallelism must be in 1..2047, was 0"
        shouldThrow<IllegalArgumentException> { StealingOptions(spinRounds = -1) }.message shouldBe "spinRounds must be >= 0, was -1"
        shouldThrow<IllegalArgumentException> { StealingOptions(globalCheckInterval = 0) }.message shouldBe "globalCheckInterval must be >= 1, was 0"
        shouldThrow<IllegalArgumentException> { StealingOptions(initialDequeCapacity = 3) }.message shouldBe "initialDequeCapacity must be a power of two >= 2, was 3"
        shouldThrow<IllegalArgumentException> { StealingOptions(maxInlineDepth = -5) }.message shouldBe "maxInlineDepth must be >= 0, was -5"
        shouldThrow<IllegalArgumentException> { StealingOptions.DEFAULT.withSpinRounds(-2) }.message shouldBe "spinRounds must be >= 0, was -2"
    }

    test("initialDequeCapacity is bounded up front (1 shl 30 was accepted and killed the first worker with OutOfMemoryError)") {
        shouldThrow<IllegalArgumentException> { StealingOptions(initialDequeCapacity = 1 shl 30) }.message shouldBe
            "initialDequeCapacity must be at most 65536 (deques grow as needed), was 1073741824"
        StealingOptions(initialDequeCapacity = 1 shl 16).initialDequeCapacity shouldBe 65536
    }

    test("durations too long to matter mean never (starvationInterval of Long.MAX_VALUE seconds overflowed)") {
        val never = java.time.Duration.ofSeconds(Long.MAX_VALUE)
        StealingDispatcher(1, "never", StealingOptions(starvationInterval = never, keepAlive = never)).use { d ->
            d.pool.monitor shouldBe null
            d.executor.submit<Int> { 1 }.get() shouldBe 1
        }
    }

    test("starvationInterval: zero turns detection off; a positive interval below 10 ms is rejected, naming the option, the floor and the value") {
        for (tooShort in listOf(java.time.Duration.ofNanos(1), java.time.Duration.ofMillis(1), java.time.Duration.ofNanos(9_999_999))) {
            shouldThrow<IllegalArgumentException> { StealingOptions(starvationInterval = tooShort) }.message shouldBe
                "starvationInterval must be zero (detection off) or at least 10 ms, was $tooShort (${tooShort.toKotlinDuration()})"
        }
        shouldThrow<IllegalArgumentException> { StealingOptions(starvationInterval = 1.milliseconds) }.message shouldBe
            "starvationInterval must be zero (detection off) or at least 10 ms, was PT0.001S (1ms)"
        shouldThrow<IllegalArgumentException> { StealingOptions.DEFAULT.withStarvationInterval(5.milliseconds) }.message shouldBe
            "starvationInterval must be zero (detection off) or at least 10 ms, was PT0.005S (5ms)"
        shouldThrow<IllegalArgumentException> { StealingOptions(starvationInterval = java.time.Duration.ofMillis(-1)) }.message shouldBe
            "starvationInterval must be >= 0, was PT-0.001S"
        StealingOptions(starvationInterval = 10.milliseconds).starvationInterval shouldBe java.time.Duration.ofMillis(10)
        StealingOptions.DEFAULT.withStarvationInterval(java.time.Duration.ofMillis(10)).starvationInterval shouldBe java.time.Duration.ofMillis(10)
        StealingDispatcher(1, "floor", StealingOptions(starvationInterval = 10.milliseconds)).use { d ->
            d.pool.monitor shouldNotBe null
            d.executor.submit<Int> { 1 }.get() shouldBe 1
        }
        StealingDispatcher(1, "off", StealingOptions(starvationInterval = Duration.ZERO)).use { d ->
            d.pool.monitor shouldBe null
            d.executor.submit<Int> { 1 }.get() shouldBe 1
        }
    }

    test("with-copies change only their field") {
        val o = StealingOptions.DEFAULT.withDaemon(false).withMaxInlineDepth(7)
        o.daemon shouldBe false
        o.maxInlineDepth shouldBe 7
        o.spinRounds shouldBe StealingOptions.DEFAULT.spinRounds
    }

    test("daemon option reaches the threads") {
        StealingDispatcher(1, "nd", StealingOptions(daemon = false)).use { d ->
            d.executor.submit<Boolean> { Thread.currentThread().isDaemon }.get() shouldBe false
        }
    }
})
