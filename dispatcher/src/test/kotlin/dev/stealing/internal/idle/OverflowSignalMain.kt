package dev.stealing.internal.idle

import dev.stealing.StealingDispatcher
import java.util.concurrent.CountDownLatch
import java.util.concurrent.Executor
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger

/**
 * The stack-overflow abuse of a pool's signalling path, run by [SignalErrorSpec] in a fresh JVM:
 * in each round a thread with a 256 KB stack recurses until it overflows and, on the way back
 * up, submits a task to a one-worker pool at every depth, catching each `StackOverflowError`.
 * Then a task from a thread with a normal stack must run within [AWAIT_SECONDS], and `close()`
 * must return within as long; a pool that does neither is wedged. Arguments: rounds (default
 * 20), and how tasks are submitted: `execute` (the executor, the default), `keyed` (an affinity
 * executor: keyed offers from outside) or `fair` (a fair queue). Prints `rounds=N wedged=W`
 * last, and before it the pool's stats for a wedged round and the count of overflows inside
 * submissions (on standard error).
 */
object OverflowSignalMain {
    private const val AWAIT_SECONDS = 5L

    @JvmStatic
    fun main(args: Array<String>) {
        val rounds = args.getOrNull(0)?.toInt() ?: 20
        val mode = args.getOrNull(1) ?: "execute"
        var wedged = 0
        var overflows = 0L
        for (round in 1..rounds) {
            val pool = StealingDispatcher(1, "overflow-$round")
            val target: Executor = when (mode) {
                "execute" -> pool.executor
                "keyed" -> pool.affinityExecutor(round)
                "fair" -> pool.fairQueue("q").executor
                else -> throw IllegalArgumentException("mode must be execute, keyed or fair, was $mode")
            }
            val caught = AtomicInteger()
            val t = Thread(null, { recurse(target, caught) }, "deep", 256 * 1024)
            t.start()
            t.join()
            overflows += caught.get()
            val ran = CountDownLatch(1)
            target.execute { ran.countDown() }
            val closer = Thread { pool.close() }
            closer.isDaemon = true
            closer.start()
            closer.join(TimeUnit.SECONDS.toMillis(AWAIT_SECONDS))
            if (!ran.await(AWAIT_SECONDS, TimeUnit.SECONDS) || closer.isAlive) {
                wedged++
                System.out.println("wedged round $round (task ran: ${ran.count == 0L}, closed: ${!closer.isAlive}): ${pool.stats()}")
                pool.executor.shutdownNow()
            }
        }
        System.err.println("overflowsInSubmissions=$overflows") // how often the abuse hit: not part of the verdict
        println("rounds=$rounds wedged=$wedged")
    }

    private fun recurse(target: Executor, caught: AtomicInteger): Int {
        val below = try {
            recurse(target, caught)
        } catch (e: StackOverflowError) {
            0
        }
        try {
            target.execute { }
        } catch (e: StackOverflowError) {
            caught.incrementAndGet()
        }
        return below + 1
    }
}
