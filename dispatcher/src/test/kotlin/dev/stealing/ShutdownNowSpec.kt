package dev.stealing

import dev.stealing.internal.pool.AffinityDispatcher
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContainExactlyInAnyOrder
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.cancel
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import java.time.Duration
import java.util.concurrent.ConcurrentLinkedQueue
import java.util.concurrent.CountDownLatch
import java.util.concurrent.ExecutorService
import java.util.concurrent.LinkedBlockingQueue
import java.util.concurrent.ThreadPoolExecutor
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger

/**
 * What `shutdownNow()` hands back, path by path: every plain `Runnable` that never started,
 * whichever queue held it, comes back as the very object that was queued, never runs and never
 * reaches the exception handler. Where the JDK has the same contract, the scenario runs on
 * `ThreadPoolExecutor` first, for reference.
 */
class ShutdownNowSpec : FunSpec({
    /** Tasks queued per path. */
    val perPath = 50

    /**
     * Blocks each worker of [executor] on a latch (one task per [blockWorker]; an interrupt ends
     * its wait), queues [perPath] plain tasks through each of [paths] (name to a way of queuing),
     * calls `shutdownNow()` and checks that it returned exactly those tasks. [failures] is what
     * the pool's exception handler got; it must stay empty once the pool has terminated.
     */
    fun handsBackEveryPath(
        executor: ExecutorService,
        blockWorker: List<(Runnable) -> Unit>,
        paths: Map<String, (Runnable) -> Unit>,
        failures: ConcurrentLinkedQueue<String>,
    ) {
        val started = CountDownLatch(blockWorker.size)
        val release = CountDownLatch(1)
        val blockersInterrupted = AtomicInteger()
        val ran = AtomicInteger()
        try {
            for (block in blockWorker) {
                block(
                    Runnable {
                        started.countDown()
                        // If the release came before this thread got to park, await() returns with the interrupt pending.
                        val interrupted = try {
                            release.await(30, TimeUnit.SECONDS)
                            Thread.currentThread().isInterrupted
                        } catch (e: InterruptedException) {
                            true
                        }
                        if (interrupted) blockersInterrupted.incrementAndGet()
                    },
                )
            }
            started.await(10, TimeUnit.SECONDS) shouldBe true
            val queued = paths.mapValues { (_, queue) ->
                List(perPath) { Runnable { ran.incrementAndGet() } }.onEach(queue)
            }
            val handedBack = executor.shutdownNow()
            for ((path, tasks) in queued) {
                withClue("queued through $path: handed back as the same objects") {
                    handedBack.filter { t -> tasks.any { it === t } }.size shouldBe perPath
                }
            }
            handedBack shouldContainExactlyInAnyOrder queued.values.flatten()
        } finally {
            release.countDown()
        }
        executor.awaitTermination(10, TimeUnit.SECONDS) shouldBe true
        withClue("the blocked tasks were interrupted by shutdownNow") { blockersInterrupted.get() shouldBe blockWorker.size }
        withClue("a handed-back task ran") { ran.get() shouldBe 0 }
        withClue("the exception handler got a handed-back task") { failures.toList() shouldBe emptyList() }
    }

    test("shutdownNow hands back plain Runnables queued through affinityExecutor as well as through execute (ThreadPoolExecutor)") {
        // The reference: ThreadPoolExecutor hands back the Runnables it was given, as they were given.
        val reference = ThreadPoolExecutor(2, 2, 0L, TimeUnit.MILLISECONDS, LinkedBlockingQueue())
        withClue("ThreadPoolExecutor(2) (reference)") {
            handsBackEveryPath(
                reference,
                blockWorker = List(2) { { task: Runnable -> reference.execute(task) } },
                paths = mapOf("execute" to reference::execute),
                failures = ConcurrentLinkedQueue(),
            )
        }

        // No thread injection: an extra thread started for a blocked worker would run the executor's tasks.
        val failures = ConcurrentLinkedQueue<String>()
        val d = StealingDispatcher(
            2, "now-keyed",
            StealingOptions(starvationInterval = Duration.ZERO, exceptionHandler = { task, e -> failures += "$task: $e" }),
        )
        val keyOf = List(2) { slot -> (0..1000).first { AffinityDispatcher.slotFor(it, 2) == slot } }
        val keyed = keyOf.map { d.affinityExecutor(it) }
        withClue("StealingDispatcher(2)") {
            handsBackEveryPath(
                d.executor,
                blockWorker = keyed.map { ex -> { task: Runnable -> ex.execute(task) } },
                paths = mapOf(
                    "execute" to d.executor::execute,
                    "affinityExecutor(${keyOf[0]}) (worker 0)" to keyed[0]::execute,
                    "affinityExecutor(${keyOf[1]}) (worker 1)" to keyed[1]::execute,
                ),
                failures = failures,
            )
        }
        d.stats().rejected shouldBe 0L
    }

    test("shutdownNow cancels the coroutines queued on an affinity dispatcher and does not hand them back") {
        val failures = ConcurrentLinkedQueue<String>()
        val d = StealingDispatcher(
            1, "now-keyed-coroutines",
            StealingOptions(starvationInterval = Duration.ZERO, exceptionHandler = { task, e -> failures += "$task: $e" }),
        )
        val started = CountDownLatch(1)
        val release = CountDownLatch(1)
        val scope = CoroutineScope(SupervisorJob())
        val ran = AtomicInteger()
        try {
            d.affinityExecutor("k").execute {
                started.countDown()
                try {
                    release.await(30, TimeUnit.SECONDS)
                } catch (e: InterruptedException) {
                    // shutdownNow's interrupt: the task ends
                }
            }
            started.await(10, TimeUnit.SECONDS) shouldBe true
            val jobs = List(perPath) { scope.launch(d.affinity("k")) { ran.incrementAndGet() } }
            d.executor.shutdownNow() shouldBe emptyList()
            // kotlinx's rule for a closed executor: the job is cancelled and completes elsewhere.
            runBlocking { withTimeout(10_000) { jobs.forEach { it.join() } } }
            jobs.all { it.isCancelled } shouldBe true
        } finally {
            release.countDown()
            scope.cancel()
        }
        d.executor.awaitTermination(10, TimeUnit.SECONDS) shouldBe true
        ran.get() shouldBe 0
        failures.toList() shouldBe emptyList()
    }
})
