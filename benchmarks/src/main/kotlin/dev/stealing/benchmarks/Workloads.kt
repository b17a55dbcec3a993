package dev.stealing.benchmarks

import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger

/*
 * What every workload shares, the JMH benchmarks and the report (dev.stealing.benchmarks.report)
 * alike: the failure a workload throws on a wrong result, the time limit of every wait, and the
 * completion counter. The workloads themselves are in files of their own, by family:
 * FloodWorkloads.kt (floods of Runnables from outside and inside a pool), ForkJoinWorkloads.kt
 * (fib, merge sort, N-Queens), CoroutineWorkloads.kt (ping-pong, yield storm), TimerWorkloads.kt
 * (withTimeout, delay storm, schedule flood) and BusyWork.kt (a fixed amount of CPU work). Each
 * workload checks its own result and throws WrongResult when it is wrong. None allocates per
 * task beyond what the workload needs (tasks are preallocated where the workload allows it), so
 * what differs between executors is the executor's own cost.
 */

/** A workload produced a wrong result (lost or duplicated work, wrong value). */
class WrongResult(message: String) : RuntimeException(message)

/** How long any workload waits for completion before it gives up (a hang is a failure). */
val WAIT_LIMIT_SECONDS: Long = java.lang.Long.getLong("bench.waitLimitSeconds", 120L)

/**
 * Counts down [expected] completions; [await] returns when all are in and throws if any task ran
 * twice or the wait timed out. One instance per run (it is armed once).
 */
class Completion(private val expected: Int) {
    private val remaining = AtomicInteger(expected)
    private val done = CountDownLatch(1)
    @Volatile private var overrun = false

    /** Called once by each task. */
    fun complete() {
        val r = remaining.decrementAndGet()
        if (r == 0) done.countDown() else if (r < 0) overrun = true
    }

    fun await(what: String) {
        if (!done.await(WAIT_LIMIT_SECONDS, TimeUnit.SECONDS)) {
            throw WrongResult("$what: only ${expected - remaining.get()} of $expected tasks ran within $WAIT_LIMIT_SECONDS s")
        }
        if (overrun || remaining.get() != 0) throw WrongResult("$what: a task ran more than once (remaining = ${remaining.get()})")
    }
}
