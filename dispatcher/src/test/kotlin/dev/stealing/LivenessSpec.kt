package dev.stealing

import dev.stealing.testsupport.stressMultiplier
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import java.lang.management.ManagementFactory
import java.time.Duration
import java.util.concurrent.CountDownLatch
import java.util.concurrent.CyclicBarrier
import java.util.concurrent.TimeUnit

/**
 * No lost wake-ups: bursts separated by idle gaps so that workers park every time, each burst
 * needing every worker awake at once (a barrier of `parallelism` parties). A lost wake-up leaves
 * a party missing and the burst times out. Spinning is disabled so workers park immediately, and
 * starvation detection is off so that no injected thread can make up for a lost wake-up.
 */
class LivenessSpec : FunSpec({
    test("bursts after idle gaps, each needing every worker, never hang") {
        val parallelism = 4
        val bursts = 1_000 * stressMultiplier
        StealingDispatcher(parallelism, "liveness", StealingOptions(spinRounds = 0, starvationInterval = Duration.ZERO)).use { d ->
            repeat(bursts) { burst ->
                val barrier = CyclicBarrier(parallelism)
                val done = CountDownLatch(parallelism)
                when (burst % 3) {
                    0 -> // From outside: global queue.
                        repeat(parallelism) {
                            d.executor.execute {
                                barrier.await(30, TimeUnit.SECONDS)
                                done.countDown()
                            }
                        }
                    1 -> // From inside: one task queues the others onto its own deque; they must be stolen.
                        d.executor.execute {
                            repeat(parallelism - 1) {
                                d.executor.execute {
                                    barrier.await(30, TimeUnit.SECONDS)
                                    done.countDown()
                                }
                            }
                            barrier.await(30, TimeUnit.SECONDS)
                            done.countDown()
                        }
                    else -> // Forks: only the first lands on an empty deque and signals; the
                        // workers it wakes must recruit the rest (docs/parking.md, forks). This
                        // hung about once in 200,000 bursts while a fork looked for an older
                        // task before its push instead of after its fence.
                        d.executor.execute {
                            repeat(parallelism - 1) {
                                ForkedTask.fork {
                                    barrier.await(30, TimeUnit.SECONDS)
                                    done.countDown()
                                }
                            }
                            barrier.await(30, TimeUnit.SECONDS)
                            done.countDown()
                        }
                }
                if (!done.await(30, TimeUnit.SECONDS)) error("burst $burst hung: ${d.stats()}")
                // Idle gap: let every worker park.
                val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10)
                while (d.stats().idleThreads < parallelism && System.nanoTime() < deadline) Thread.sleep(1)
            }
            (d.stats().parks >= bursts) shouldBe true
        }
    }

    test("an idle pool parks every worker, stays parked and uses no CPU") {
        StealingDispatcher(2, "idle").use { d ->
            val done = CountDownLatch(100)
            repeat(100) { d.executor.execute { done.countDown() } }
            done.await(10, TimeUnit.SECONDS) shouldBe true
            // Settle: every worker on the idle stack in two snapshots 50 ms apart, and the park
            // count not moving between them. (Both must be idle: a worker counts as idle from its
            // push on the idle stack, and its park is counted only after that.)
            var before = d.stats()
            val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10)
            while (System.nanoTime() < deadline) {
                Thread.sleep(50)
                val now = d.stats()
                if (before.idleThreads == before.threads && now.idleThreads == now.threads && now.parks == before.parks) break
                before = now
            }
            before.idleThreads shouldBe before.threads
            val mx = ManagementFactory.getThreadMXBean()
            val workers = mx.getThreadInfo(mx.allThreadIds).filter { it != null && it.threadName.startsWith("idle-worker-") }
            workers.size shouldBe before.threads
            val cpuBefore = workers.sumOf { mx.getThreadCpuTime(it.threadId) }
            Thread.sleep(500) // timing is the subject here: nothing may happen while idle
            val cpuAfter = workers.sumOf { mx.getThreadCpuTime(it.threadId) }
            val after = d.stats()
            after.parks shouldBe before.parks
            after.executed shouldBe before.executed
            // Under 1% of one core over the window (500 ms -> 5 ms of CPU).
            ((cpuAfter - cpuBefore) < TimeUnit.MILLISECONDS.toNanos(5)) shouldBe true
        }
    }
})
