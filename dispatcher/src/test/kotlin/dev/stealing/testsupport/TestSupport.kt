package dev.stealing.testsupport

import dev.stealing.FairQueueDispatcher
import dev.stealing.FairQueueStats
import dev.stealing.StealingDispatcher
import io.kotest.assertions.fail
import java.nio.file.Files
import java.util.concurrent.TimeUnit

/** Size multiplier for stress tests: 1 normally, larger under `-Pstress`. */
val stressMultiplier: Int = System.getProperty("stress.multiplier", "1").toIntOrNull() ?: 1

/** A task that only carries an id, for queue tests. */
class IdTask(val id: Int) : Runnable {
    override fun run() {}
    override fun toString(): String = "IdTask($id)"
}

/**
 * Polls [condition] until it holds or [timeoutMs] pass; returns whether it held. For states
 * that are reached by a timer inside the pool (keep-alive, starvation detection), where no
 * latch can be handed in.
 */
fun eventually(timeoutMs: Long, condition: () -> Boolean): Boolean {
    val deadline = System.nanoTime() + timeoutMs * 1_000_000
    while (System.nanoTime() < deadline) {
        if (condition()) return true
        Thread.sleep(5)
    }
    return condition()
}

/**
 * Runs [main]'s `main` in a fresh JVM ([javaCommand], this JVM's by default) on this test's class
 * path ([jvmArgs] before the class name, [args] after it; [launcher], such as `taskset -c 0`,
 * before `java`) and returns its output lines, stdout
 * and stderr together. Fails, killing it, if it has not ended within [timeoutSeconds]: a hang
 * becomes a failure, not a stuck build.
 */
fun runInFreshJvm(
    main: Class<*>,
    jvmArgs: List<String> = emptyList(),
    launcher: List<String> = emptyList(),
    timeoutSeconds: Long = 300,
    args: List<String> = emptyList(),
    javaCommand: String = ProcessHandle.current().info().command().orElse("java"),
): List<String> {
    val log = Files.createTempFile("fresh-jvm", ".log")
    try {
        val command = launcher + javaCommand + jvmArgs + listOf("-cp", System.getProperty("java.class.path"), main.name) + args
        val p = ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start()
        if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
            p.destroyForcibly()
            fail("${main.simpleName} did not end within $timeoutSeconds s; the last of its output: ${Files.readAllLines(log).takeLast(20)}")
        }
        return Files.readAllLines(log)
    } finally {
        Files.deleteIfExists(log)
    }
}

/** Busy-waits for [nanos] nanoseconds: a task with a known amount of CPU work. */
fun spin(nanos: Long) {
    val end = System.nanoTime() + nanos
    while (System.nanoTime() < end) Thread.onSpinWait()
}

/**
 * Runs [block] on a daemon thread and waits at most [timeoutMs] for it: a spin or livelock
 * inside it becomes a test failure instead of a hung build. Rethrows what [block] threw.
 */
fun runWithin(timeoutMs: Long, block: () -> Unit) {
    var failure: Throwable? = null
    val t = Thread {
        try {
            block()
        } catch (e: Throwable) {
            failure = e
        }
    }
    t.isDaemon = true
    t.start()
    t.join(timeoutMs)
    if (t.isAlive) throw AssertionError("did not finish within $timeoutMs ms:\n" + t.stackTrace.joinToString("\n") { "  at $it" })
    failure?.let { throw it }
}

/** Fair queue [q]'s row in [this] dispatcher's stats (its depth counts offers in progress too). */
fun StealingDispatcher.statsOf(q: FairQueueDispatcher): FairQueueStats = stats().fairQueues.single { it.name == q.name }

/**
 * Lincheck options whose per-invocation hang detection allows for a busy machine: Lincheck
 * reports "The execution has hung" when one invocation takes longer than its timeout (30 s by
 * default), and beside other CPU-bound processes (a load of 10-13 on 2 cores) a model check of
 * the timer heap or a forkJoin take-back crossed it without any hang. Five minutes still turns
 * a real deadlock into a failure. The setter is not public API in Lincheck 3.7 (`timeoutMs` is
 * protected, its builder internal), hence the reflection.
 */
fun <O : org.jetbrains.lincheck.datastructures.Options<*, *>> loadTolerant(options: O): O {
    val setter = org.jetbrains.lincheck.datastructures.Options::class.java.getDeclaredMethod("setTimeoutMs", Long::class.javaPrimitiveType)
    setter.isAccessible = true
    setter.invoke(options, LINCHECK_INVOCATION_TIMEOUT_MS)
    return options
}

/** See [loadTolerant]. */
const val LINCHECK_INVOCATION_TIMEOUT_MS: Long = 300_000
