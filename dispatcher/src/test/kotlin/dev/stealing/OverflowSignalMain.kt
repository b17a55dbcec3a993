package dev.stealing

import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger

/**
 * The stack-overflow abuse of a pool's signalling path, run by [SignalErrorSpec] in a fresh JVM:
 * in each round a thread with a 256 KB stack recurses until it overflows and, on the way back
 * up, executes a task on a one-worker pool at every depth, catching each `StackOverflowError`.
 * Then a task from a thread with a normal stack must run within [AWAIT_SECONDS]; a pool that
 * does not run it is wedged. Arguments: rounds (default 20). Prints `rounds=N wedged=W` last,
 * and before it the pool's stats for a wedged round and the count of overflows inside `execute()`.
 */
object OverflowSignalMain {
    private const val AWAIT_SECONDS = 5L

    @JvmStatic
    fun main(args: Array<String>) {
        val rounds = args.firstOrNull()?.toInt() ?: 20
        var wedged = 0
        var overflows = 0L
        for (round in 1..rounds) {
            val pool = StealingDispatcher(1, "overflow-$round")
            val caught = AtomicInteger()
            val t = Thread(null, { recurse(pool, 0, caught) }, "deep", 256 * 1024)
            t.start()
            t.join()
            overflows += caught.get()
            val ran = CountDownLatch(1)
            pool.executor.execute { ran.countDown() }
            if (!ran.await(AWAIT_SECONDS, TimeUnit.SECONDS)) {
                wedged++
                System.out.println("wedged round $round: ${pool.stats()}")
            }
            pool.executor.shutdownNow()
            pool.executor.awaitTermination(10, TimeUnit.SECONDS)
        }
        System.err.println("overflowsInExecute=$overflows") // how often the abuse hit: not part of the verdict
        println("rounds=$rounds wedged=$wedged")
    }

    private fun recurse(pool: StealingDispatcher, depth: Int, caught: AtomicInteger): Int {
        val below = try {
            recurse(pool, depth + 1, caught)
        } catch (e: StackOverflowError) {
            0
        }
        try {
            pool.executor.execute { }
        } catch (e: StackOverflowError) {
            caught.incrementAndGet()
        }
        return below + 1
    }
}
