package dev.stealing

/** Size multiplier for stress tests: 1 normally, larger under `-Pstress`. */
val stressMultiplier: Int = System.getProperty("stress.multiplier", "1").toIntOrNull() ?: 1

/** A task that only carries an id, for queue tests. */
class IdTask(val id: Int) : Runnable {
    override fun run() {}
    override fun toString(): String = "IdTask($id)"
}
