package dev.stealing

import dev.stealing.internal.jvm.StealEvent
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContainAll
import io.kotest.matchers.shouldBe
import jdk.jfr.Recording
import jdk.jfr.consumer.RecordingFile
import kotlinx.coroutines.launch
import java.nio.file.Files
import java.util.concurrent.CountDownLatch
import java.util.concurrent.CyclicBarrier
import java.util.concurrent.TimeUnit

class JfrEventsSpec : FunSpec({
    test("a JFR recording contains the pool's steal, park, unpark and task-failure events") {
        val names = listOf("dev.stealing.Steal", "dev.stealing.Park", "dev.stealing.Unpark", "dev.stealing.TaskFailure")
        val file = Files.createTempFile("stealing", ".jfr")
        Recording().use { recording ->
            names.forEach { recording.enable(it).withThreshold(java.time.Duration.ZERO) }
            recording.start()
            StealingDispatcher(2, "jfr", StealingOptions(spinRounds = 0, exceptionHandler = { _, _ -> })).use { d ->
                repeat(20) {
                    // One task forks another and waits for it at a barrier: the idle worker is
                    // woken (unpark) and must steal it; between rounds both workers park.
                    val barrier = CyclicBarrier(2)
                    val done = CountDownLatch(2)
                    d.executor.execute {
                        d.executor.execute { barrier.await(10, TimeUnit.SECONDS); done.countDown() }
                        barrier.await(10, TimeUnit.SECONDS)
                        done.countDown()
                    }
                    done.await(10, TimeUnit.SECONDS) shouldBe true
                    val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5)
                    while (d.stats().idleThreads < 2 && System.nanoTime() < deadline) Thread.sleep(1)
                }
                d.executor.execute { throw IllegalStateException("recorded") }
            }
            recording.stop()
            recording.dump(file)
        }
        val seen = RecordingFile.readAllEvents(file).map { it.eventType.name }.toSet()
        Files.deleteIfExists(file)
        seen shouldContainAll names
    }

    test("a JFR recording contains thread injection and retirement events") {
        val names = listOf("dev.stealing.ThreadInjection", "dev.stealing.ThreadRetirement")
        val file = Files.createTempFile("stealing-inject", ".jfr")
        Recording().use { recording ->
            names.forEach { recording.enable(it).withThreshold(java.time.Duration.ZERO) }
            recording.start()
            val options = StealingOptions(keepAlive = java.time.Duration.ofMillis(50), starvationInterval = java.time.Duration.ZERO)
            StealingDispatcher(1, "jfr-inject", options).use { d ->
                // Two tasks that need each other on one worker: the marked wait injects a thread.
                val both = CountDownLatch(2)
                val tasks = List(2) {
                    d.executor.submit {
                        both.countDown()
                        StealingDispatcher.managedBlock(object : java.util.concurrent.ForkJoinPool.ManagedBlocker {
                            override fun block(): Boolean { both.await(); return true }
                            override fun isReleasable(): Boolean = both.count == 0L
                        })
                    }
                }
                tasks.forEach { it.get(10, TimeUnit.SECONDS) }
                eventually(10_000) { d.stats().retiredThreads >= 1 } shouldBe true
            }
            recording.stop()
            recording.dump(file)
        }
        val seen = RecordingFile.readAllEvents(file).map { it.eventType.name }.toSet()
        Files.deleteIfExists(file)
        seen shouldContainAll names
    }

    test("a timer fired late emits one LateTimer event for its batch, not one per timer") {
        val file = Files.createTempFile("stealing-late", ".jfr")
        Recording().use { recording ->
            recording.enable("dev.stealing.LateTimer").withThreshold(java.time.Duration.ZERO)
            recording.start()
            StealingDispatcher(1, "jfr-late").use { d ->
                kotlinx.coroutines.runBlocking(d) {
                    // 20 timers on this worker, due in 1 ms, while it computes for 100 ms: the one
                    // worker is busy, so they are taken late, all in one batch.
                    val timers = List(20) { launch(start = kotlinx.coroutines.CoroutineStart.UNDISPATCHED) { kotlinx.coroutines.delay(1) } }
                    spin(TimeUnit.MILLISECONDS.toNanos(100))
                    timers.forEach { it.join() }
                }
            }
            recording.stop()
            recording.dump(file)
        }
        val late = RecordingFile.readAllEvents(file).filter { it.eventType.name == "dev.stealing.LateTimer" }
        Files.deleteIfExists(file)
        late.size shouldBe 1
        late[0].getString("pool") shouldBe "jfr-late"
        late[0].getInt("timers") shouldBe 20
        (late[0].getLong("lateness") >= TimeUnit.MILLISECONDS.toNanos(20)) shouldBe true
    }

    test("the events carry the pool's name and show up under the category 'Stealing Dispatcher'") {
        val type = jdk.jfr.EventType.getEventType(StealEvent::class.java)
        type.categoryNames shouldBe listOf("Stealing Dispatcher")
        type.fields.map { it.name } shouldContainAll listOf("pool", "thief", "victim")
    }
})
