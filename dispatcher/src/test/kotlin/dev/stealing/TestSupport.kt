package dev.stealing

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

/** Busy-waits for [nanos] nanoseconds: a task with a known amount of CPU work. */
fun spin(nanos: Long) {
    val end = System.nanoTime() + nanos
    while (System.nanoTime() < end) Thread.onSpinWait()
}
