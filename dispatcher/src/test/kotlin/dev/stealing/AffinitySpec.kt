package dev.stealing

import dev.stealing.internal.pool.AffinityDispatcher
import dev.stealing.internal.worker.Worker
import dev.stealing.testsupport.eventually
import dev.stealing.testsupport.spin
import dev.stealing.testsupport.stressMultiplier
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.ints.shouldBeGreaterThan
import io.kotest.matchers.ints.shouldBeLessThan
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import kotlinx.coroutines.yield
import java.time.Duration
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.CountDownLatch
import java.util.concurrent.RejectedExecutionException
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger
import java.util.concurrent.atomic.AtomicLong

class AffinitySpec : FunSpec({
    test("10 keys x 10,000 steps with yield and delay under a flood: one thread per key, all workers used, never concurrent") {
        val parallelism = 4
        val keys = 10
        val coroutinesPerKey = 10
        val stepsPerCoroutine = 1_000 * stressMultiplier
        StealingDispatcher(parallelism, "affinity").use { d ->
            val threadsOfKey = Array(keys) { ConcurrentHashMap.newKeySet<Thread>() }
            val inside = Array(keys) { AtomicInteger() }
            val overlaps = AtomicInteger()
            val steps = AtomicLong()
            val floodDone = AtomicInteger()
            runBlocking {
                // The flood of ordinary work, on the same pool, at the same time.
                val flood = launch(d) {
                    repeat(200_000) { launch { floodDone.incrementAndGet() } }
                }
                for (k in 0 until keys) repeat(coroutinesPerKey) { c ->
                    launch(d.affinity(k)) {
                        repeat(stepsPerCoroutine) { i ->
                            // One step: nobody else of this key may be inside at the same time.
                            if (inside[k].incrementAndGet() != 1) overlaps.incrementAndGet()
                            threadsOfKey[k] += Thread.currentThread()
                            steps.incrementAndGet()
                            inside[k].decrementAndGet()
                            if (i % 250 == c) delay(1) else yield()
                        }
                    }
                }
                flood.join()
            }
            overlaps.get() shouldBe 0
            steps.get() shouldBe keys.toLong() * coroutinesPerKey * stepsPerCoroutine
            floodDone.get() shouldBe 200_000
            for (k in 0 until keys) threadsOfKey[k].size shouldBe 1
            threadsOfKey.map { it.single() }.toSet().size shouldBe parallelism // 10 keys cover all 4 workers
            threadsOfKey.all { it.single() is Worker } shouldBe true
            d.stats().affinityPops shouldBe d.stats().affinityPops // readable
        }
    }

    test("withContext(affinity) and the Executor form run on the key's worker; equal keys give equal dispatchers") {
        StealingDispatcher(2, "affinity-forms").use { d ->
            d.affinity("account-7") shouldBe d.affinity("account-7")
            val viaContext = runBlocking { withContext(d.affinity("account-7")) { Thread.currentThread() } }
            val viaExecutor = CountDownLatch(1)
            var executorThread: Thread? = null
            d.affinityExecutor("account-7").execute {
                executorThread = Thread.currentThread()
                viaExecutor.countDown()
            }
            viaExecutor.await(10, TimeUnit.SECONDS) shouldBe true
            executorThread shouldBe viaContext
            (viaContext is Worker) shouldBe true
        }
    }

    test("keys spread evenly: sequential ids land on every worker about equally") {
        val parallelism = 8
        val counts = IntArray(parallelism)
        for (id in 0 until 80_000) counts[AffinityDispatcher.slotFor(id, parallelism)]++
        for (c in counts) (c in 9_000..11_000) shouldBe true
        val longCounts = IntArray(parallelism)
        for (id in 0 until 80_000) longCounts[AffinityDispatcher.slotFor(id.toLong() shl 8, parallelism)]++
        for (c in longCounts) (c in 9_000..11_000) shouldBe true
    }

    test("a long backlog of keyed work does not starve shared work, and the reverse") {
        StealingDispatcher(1, "affinity-fair", StealingOptions(starvationInterval = Duration.ZERO)).use { d ->
            val keyedDone = AtomicInteger()
            val gate = CountDownLatch(1)
            d.executor.execute { gate.await() } // hold the only worker while the backlog builds
            val keyed = d.affinityExecutor("k")
            repeat(10_000) { keyed.execute { spin(10_000); keyedDone.incrementAndGet() } }
            val keyedAtShared = d.executor.submit<Int> { keyedDone.get() }
            gate.countDown()
            val seen = keyedAtShared.get(30, TimeUnit.SECONDS)
            println("shared task ran after $seen of 10,000 keyed tasks")
            seen shouldBeLessThan 100
            eventually(60_000) { keyedDone.get() == 10_000 } shouldBe true // the keyed backlog drained

            val sharedDone = AtomicInteger()
            val gate2 = CountDownLatch(1)
            d.executor.execute { gate2.await() }
            val shared = List(10_000) { d.executor.submit { spin(10_000); sharedDone.incrementAndGet() } }
            val sharedAtKeyed = CountDownLatch(1)
            var seenShared = -1
            keyed.execute { seenShared = sharedDone.get(); sharedAtKeyed.countDown() }
            gate2.countDown()
            sharedAtKeyed.await(30, TimeUnit.SECONDS) shouldBe true
            println("keyed task ran after $seenShared of 10,000 shared tasks")
            seenShared shouldBeLessThan 100
            shared.forEach { it.get(30, TimeUnit.SECONDS) }
        }
    }

    test("an idle pool wakes for keyed work, every time (idle gaps between single keyed tasks)") {
        val parallelism = 3
        StealingDispatcher(parallelism, "affinity-wake", StealingOptions(spinRounds = 0, starvationInterval = Duration.ZERO)).use { d ->
            d.affinity(0) // starts every core worker
            repeat(300 * stressMultiplier) { round ->
                // Idle gap: every worker parked.
                eventually(10_000) { d.stats().idleThreads == parallelism } shouldBe true
                val done = CountDownLatch(1)
                d.affinityExecutor(round).execute { done.countDown() }
                if (!done.await(10, TimeUnit.SECONDS)) error("keyed task of round $round was never run: ${d.stats()}")
            }
        }
    }

    test("a searching worker takes keyed work offered to it between spin-waits, before its next steal round") {
        // The other worker is held in a task, so the searcher's steal rounds find nothing and
        // each adds 2 to stealAttempts (that worker's deque and yield queue). An offer to a
        // searcher wakes nobody; the searcher (which has run keyed work: threadOf below) looks
        // at its keyed queue between spin-waits. Before, it looked only at its steal rounds, so
        // the task always started after one more round. On a busy machine a search can end
        // early in a park, and the offer's unpark then starts the task with no round in between
        // either: there the test passes without showing anything, it cannot fail.
        StealingDispatcher(2, "affinity-search", StealingOptions(spinRounds = 100_000, starvationInterval = Duration.ZERO)).use { d ->
            fun threadOf(key: Int): Thread {
                var t: Thread? = null
                val ran = CountDownLatch(1)
                d.affinityExecutor(key).execute { t = Thread.currentThread(); ran.countDown() }
                ran.await(10, TimeUnit.SECONDS) shouldBe true
                return t!!
            }
            val searcherKey = 0
            val searcher = threadOf(searcherKey)
            val heldKey = (1 until 100).first { threadOf(it) !== searcher }
            val release = CountDownLatch(1)
            val held = CountDownLatch(1)
            d.affinityExecutor(heldKey).execute { held.countDown(); release.await(60, TimeUnit.SECONDS) }
            try {
                held.await(10, TimeUnit.SECONDS) shouldBe true
                val keyed = d.affinityExecutor(searcherKey)
                var searching = 0
                var withoutRound = 0
                repeat(100) {
                    val ran = CountDownLatch(1)
                    keyed.execute { ran.countDown() }
                    ran.await(10, TimeUnit.SECONDS) shouldBe true
                    // In the search loop (its first round before the search and one in it), or
                    // parked: a yield that kept it off the core ends a search (the JIT's threads
                    // want the core early on, other processes on a busy machine).
                    val afterTask = d.stats().stealAttempts
                    eventually(10_000) { d.stats().stealAttempts >= afterTask + 4 || d.stats().idleThreads == 1 } shouldBe true
                    val offered = d.stats()
                    if (offered.idleThreads != 0) return@repeat
                    var atStart: StealingStats? = null
                    val started = CountDownLatch(1)
                    keyed.execute { atStart = d.stats(); started.countDown() }
                    val roundDuringOffer = d.stats().stealAttempts != offered.stealAttempts
                    started.await(10, TimeUnit.SECONDS) shouldBe true
                    if (roundDuringOffer) return@repeat // this thread was slow to offer (or preempted)
                    val start = atStart!!
                    if (start.parks != offered.parks) return@repeat // it parked meanwhile: the unpark path
                    searching++
                    if (start.stealAttempts == offered.stealAttempts) withoutRound++
                }
                println("keyed work offered to a searcher, taken without a steal round in between: $withoutRound of $searching")
                if (searching >= 10) withoutRound shouldBeGreaterThan searching * 2 / 3
            } finally {
                release.countDown()
            }
        }
    }

    test("close runs the keyed work accepted before it and rejects what comes after: none lost") {
        repeat(20 * stressMultiplier) { round ->
            val d = StealingDispatcher(2, "affinity-close-$round")
            val executed = AtomicInteger()
            val rejected = AtomicInteger()
            val submitted = AtomicInteger()
            val producers = List(2) { p ->
                Thread {
                    val ex = d.affinityExecutor(p)
                    while (true) {
                        submitted.incrementAndGet()
                        try {
                            ex.execute { executed.incrementAndGet() }
                        } catch (e: RejectedExecutionException) {
                            rejected.incrementAndGet()
                            return@Thread
                        }
                    }
                }.apply { start() }
            }
            Thread.sleep(5) // let the producers get going: this test is about the race with close()
            d.close()
            producers.forEach { it.join(10_000) }
            (executed.get() + rejected.get()) shouldBe submitted.get()
            rejected.get() shouldBe 2
        }
    }
})
