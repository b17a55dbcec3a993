package dev.stealing

import dev.stealing.internal.worker.Worker
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.shouldNotBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.string.shouldStartWith
import net.openhft.affinity.Affinity
import java.time.Duration
import java.util.BitSet
import java.util.concurrent.Callable
import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit

class PinningSpec : FunSpec({
    test("pinThreads: each core worker runs on its own CPU where the OS allows it, and the pool runs either way") {
        val allowed = Affinity.getAffinity() // this process's CPU set (empty: no native support)
        // No thread injection: both tasks must run on the (pinned) core workers, not on an unpinned
        // extra thread started because the first waited while the second worker was slow to start.
        StealingDispatcher(2, "pinned", StealingOptions(pinThreads = true, starvationInterval = Duration.ZERO)).use { d ->
            // One task per worker at once, each reporting its thread's CPU set.
            val both = CountDownLatch(2)
            val sets = List(2) {
                d.executor.submit(Callable {
                    both.countDown()
                    both.await(10, TimeUnit.SECONDS)
                    (Thread.currentThread() as Worker).pinnedCpu to Affinity.getAffinity()
                })
            }.map { it.get(10, TimeUnit.SECONDS) }
            val pinning = d.stats().pinning
            println("pinning: $pinning (process CPUs $allowed)")
            if (allowed.cardinality() >= 2) {
                pinning.mode shouldBe StealingStats.Pinning.Mode.ON
                pinning.toString() shouldStartWith "on: CPUs"
                for ((cpu, set) in sets) set shouldBe BitSet().apply { set(cpu) }
                sets.map { it.first }.toSet().size shouldBe 2 // two workers, two CPUs
                pinning.cpus.toSet() shouldBe sets.map { it.first }.toSet()
                d.stats().toString() shouldContain "pinning=on"
            } else {
                pinning.mode shouldBe StealingStats.Pinning.Mode.OFF // and yet every task ran
                pinning.reason shouldNotBe null
                pinning.toString() shouldStartWith "off (not allowed"
            }
        }
    }

    test("pinning is off by default and says so") {
        StealingDispatcher(1, "unpinned").use { d ->
            d.executor.submit(Callable { (Thread.currentThread() as Worker).pinnedCpu }).get() shouldBe -1
            d.stats().pinning.mode shouldBe StealingStats.Pinning.Mode.OFF
            d.stats().pinning.toString() shouldBe "off"
        }
    }
})
