package dev.stealing.benchmarks

/*
 * A fixed amount of CPU work, counted in steps rather than timed: the busy part of the affinity,
 * fair-queue and blocking-mix benchmarks and of the withTimeout workload.
 */

/**
 * A fixed amount of CPU work, the same on every executor: `iterations` xorshift64 steps, each
 * depending on the last, so the time is the same whatever thread runs them (about 1.9 ns a
 * step on the 2-core reference machine: [ITERATIONS_PER_MICRO] steps are about 1 us). Counted
 * in steps rather than timed with `System.nanoTime`, so a preempted task still does all its
 * work. The result is returned and the loop cannot be dropped by the JIT.
 */
object BusyWork {
    /** Steps in about one microsecond on the reference machine (measured: 1.9 ns a step). */
    const val ITERATIONS_PER_MICRO = 530

    @Volatile private var sink = 0L

    /** [iterations] steps from [seed]; never 0 (xorshift keeps a non-zero state non-zero). */
    fun spin(iterations: Int, seed: Long): Long {
        var x = seed or 1L
        for (i in 0 until iterations) {
            x = x xor (x shl 13)
            x = x xor (x ushr 7)
            x = x xor (x shl 17)
        }
        if (x == 0L) sink = x // never true; the JIT cannot know
        return x
    }
}
