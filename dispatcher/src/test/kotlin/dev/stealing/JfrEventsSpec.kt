package dev.stealing

import dev.stealing.internal.jvm.StealEvent
import dev.stealing.testsupport.eventually
import dev.stealing.testsupport.runInFreshJvm
import dev.stealing.testsupport.spin
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContainAll
import io.kotest.matchers.shouldBe
import jdk.jfr.Recording
import jdk.jfr.consumer.RecordedEvent
import jdk.jfr.consumer.RecordingFile
import kotlinx.coroutines.launch
import java.nio.file.Files
import java.util.concurrent.CountDownLatch
import java.util.concurrent.CyclicBarrier
import java.util.concurrent.TimeUnit

/** The events of the first test: their names, which [JfrLateStartMain] looks for too. */
private val STEAL_PARK_UNPARK_FAILURE = listOf("dev.stealing.Steal", "dev.stealing.Park", "dev.stealing.Unpark", "dev.stealing.TaskFailure")

/**
 * Runs a 2-worker pool named [name] through steals, parks, wake-ups and a task failure: 20 times
 * one task forks another and waits for it at a barrier, so the idle worker is woken (unpark) and
 * must steal it; between rounds both workers park. Then a task throws.
 */
internal fun stealParkUnparkAndFail(name: String) {
    StealingDispatcher(2, name, StealingOptions(spinRounds = 0, exceptionHandler = { _, _ -> })).use { d ->
        repeat(20) {
            val barrier = CyclicBarrier(2)
            val done = CountDownLatch(2)
            d.executor.execute {
                d.executor.execute { barrier.await(10, TimeUnit.SECONDS); done.countDown() }
                barrier.await(10, TimeUnit.SECONDS)
                done.countDown()
            }
            check(done.await(10, TimeUnit.SECONDS)) { "round $it did not finish" }
            val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5)
            while (d.stats().idleThreads < 2 && System.nanoTime() < deadline) Thread.sleep(1)
        }
        d.executor.execute { throw IllegalStateException("recorded") }
    }
}

/** The names of the events [recordedEvents] recorded. */
internal fun recordedEventNames(names: List<String>, block: () -> Unit): Set<String> =
    recordedEvents(names, block).map { it.eventType.name }.toSet()

/** Runs [block] under a new recording of the events [names] (no threshold); the events recorded. */
internal fun recordedEvents(names: List<String>, block: () -> Unit): List<RecordedEvent> {
    val file = Files.createTempFile("stealing", ".jfr")
    try {
        Recording().use { recording ->
            names.forEach { recording.enable(it).withThreshold(java.time.Duration.ZERO) }
            recording.start()
            block()
            recording.stop()
            recording.dump(file)
        }
        return RecordingFile.readAllEvents(file)
    } finally {
        Files.deleteIfExists(file)
    }
}

class JfrEventsSpec : FunSpec({
    test("a JFR recording contains the pool's steal, park, unpark and task-failure events") {
        recordedEventNames(STEAL_PARK_UNPARK_FAILURE) { stealParkUnparkAndFail("jfr") } shouldContainAll STEAL_PARK_UNPARK_FAILURE
    }

    test("a JFR recording contains thread injection and retirement events") {
        val names = listOf("dev.stealing.ThreadInjection", "dev.stealing.ThreadRetirement")
        val seen = recordedEventNames(names) {
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
        }
        seen shouldContainAll names
    }

    test("a timer fired late emits one LateTimer event for its batch, not one per timer") {
        val events = recordedEvents(listOf("dev.stealing.LateTimer")) {
            StealingDispatcher(1, "jfr-late").use { d ->
                kotlinx.coroutines.runBlocking(d) {
                    // 20 timers on this worker, due in 1 ms, while it computes for 100 ms: the one
                    // worker is busy, so they are taken late, all in one batch.
                    val timers = List(20) { launch(start = kotlinx.coroutines.CoroutineStart.UNDISPATCHED) { kotlinx.coroutines.delay(1) } }
                    spin(TimeUnit.MILLISECONDS.toNanos(100))
                    timers.forEach { it.join() }
                }
            }
        }
        val late = events.filter { it.eventType.name == "dev.stealing.LateTimer" }
        late.size shouldBe 1
        late[0].getString("pool") shouldBe "jfr-late"
        late[0].getInt("timers") shouldBe 20
        (late[0].getLong("lateness") >= TimeUnit.MILLISECONDS.toNanos(20)) shouldBe true
    }

    test("a pool does not set up JFR before a recording starts, and records its events once one starts later") {
        // Fresh JVM: the class-loading log shows whether the pool loaded an event class (which
        // sets up JFR's Java side, 250 ms and more, on a worker in its first steal).
        val lines = runInFreshJvm(JfrLateStartMain::class.java, jvmArgs = listOf("-Xlog:class+load=info:stdout"))
        val marker = lines.indexOf(JfrLateStartMain.RECORDING_STARTS)
        withClue(lines.takeLast(20).joinToString("\n")) { (marker > 0) shouldBe true }
        val beforeRecording = lines.subList(0, marker).filter {
            it.contains("jdk.jfr.internal.MetadataRepository") || it.contains("dev.stealing.internal.jvm.") && it.contains("Event ")
        }
        beforeRecording shouldBe emptyList()
        lines.filter { it.startsWith("recorded: ") } shouldBe listOf("recorded: ${STEAL_PARK_UNPARK_FAILURE.joinToString()}")
    }

    test("the events carry the pool's name and show up under the category 'Stealing Dispatcher'") {
        val type = jdk.jfr.EventType.getEventType(StealEvent::class.java)
        type.categoryNames shouldBe listOf("Stealing Dispatcher")
        type.fields.map { it.name } shouldContainAll listOf("pool", "thief", "victim")
    }
})

/**
 * Run in a fresh JVM by [JfrEventsSpec]: a pool steals, parks, wakes and fails a task with no
 * recording; then a recording starts and the same again is recorded. Prints
 * [RECORDING_STARTS] between the two and, last, the event names the recording holds.
 */
object JfrLateStartMain {
    const val RECORDING_STARTS = "-- recording starts --"

    @JvmStatic
    fun main(args: Array<String>) {
        stealParkUnparkAndFail("before-jfr")
        println(RECORDING_STARTS)
        val seen = recordedEventNames(STEAL_PARK_UNPARK_FAILURE) { stealParkUnparkAndFail("after-jfr") }
        println("recorded: " + STEAL_PARK_UNPARK_FAILURE.filter { it in seen }.joinToString())
    }
}
