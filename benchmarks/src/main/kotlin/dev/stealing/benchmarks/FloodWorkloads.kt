package dev.stealing.benchmarks

import java.util.concurrent.CountDownLatch
import java.util.concurrent.Executor
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger
import java.util.concurrent.locks.LockSupport

/*
 * The flood workloads: plain no-op Runnables pushed through an Executor, so that what is timed is
 * the executor's queuing, waking and dequeuing. From one thread outside the pool (NoopFlood, part
 * 1 of Joe Duffy's 2008 thread-pool series), from outside and then inside the pool (FanOut, part
 * 3), from one task inside the pool (InPoolSubmit, the report's pool-instance spread), and a
 * batch that allocates nothing of its own (DispatchDrain, the executor's allocation per task).
 * The task objects are preallocated.
 */

// ---------------------------------------------------------------------------------------------
// 1M no-op Runnables from one outside thread (the harness of part 1 of Joe Duffy's 2008 thread-pool series)
// ---------------------------------------------------------------------------------------------

/**
 * The queue/drain benchmark of part 1 of Joe Duffy's 2008 thread-pool series: [count] no-op `Runnable`s submitted by one thread outside the
 * pool, then a wait until all have run. "Separated" runs hold the workers back while the
 * producer queues, as that article does: every task first waits on a gate that opens only after the
 * last submission, so the first task each worker takes parks it and the rest stay queued; the
 * queue phase then measures queuing alone and the drain phase the dequeuing alone. "Overlapped"
 * runs let the workers drain while the producer queues. The same two task objects are submitted
 * every time, so the workload itself allocates nothing per task.
 *
 * Use: [arm], [enqueue], [release] (separated only), [awaitDrain]; or [run] for all four.
 */
class NoopFlood(private val executor: Executor, val count: Int = 1_000_000) {
    @Volatile private var gate = CountDownLatch(0)
    @Volatile private var completion = Completion(0)
    private var separated = false

    private val gated = Runnable {
        gate.await()
        completion.complete()
    }
    private val free = Runnable { completion.complete() }

    fun arm(separated: Boolean) {
        this.separated = separated
        gate = CountDownLatch(if (separated) 1 else 0)
        completion = Completion(count)
    }

    fun enqueue() {
        val task = if (separated) gated else free
        val ex = executor
        for (i in 0 until count) ex.execute(task)
    }

    fun release() = gate.countDown()

    fun awaitDrain() {
        release() // in case a failure skipped it
        completion.await("no-op flood of $count")
    }

    /** One full run; returns (queue ns, drain ns). */
    fun run(separated: Boolean): Pair<Long, Long> {
        arm(separated)
        val t0 = System.nanoTime()
        enqueue()
        val t1 = System.nanoTime()
        release()
        awaitDrain()
        val t2 = System.nanoTime()
        return (t1 - t0) to (t2 - t1)
    }
}

// ---------------------------------------------------------------------------------------------
// Recursive fan-out (part 3 of Duffy's series): N tasks from outside, each queues M children from inside
// ---------------------------------------------------------------------------------------------

/**
 * The recursive queuing benchmark of part 3 of Duffy's series: [top] tasks submitted from outside the pool, each of
 * which, running on a pool thread, submits [children] no-op tasks to the same executor. Every
 * task (parents and children) counts one completion. Parent and child are preallocated.
 */
class FanOut(private val executor: Executor, val top: Int, val children: Int) {
    @Volatile private var completion = Completion(0)
    private val child = Runnable { completion.complete() }
    private val parent = Runnable {
        val ex = executor
        for (i in 0 until children) ex.execute(child)
        completion.complete()
    }

    fun run() {
        val c = Completion(top * (children + 1))
        completion = c
        val ex = executor
        for (i in 0 until top) ex.execute(parent)
        c.await("fan-out $top x $children")
    }
}

// ---------------------------------------------------------------------------------------------
// One task on the pool submits N no-op tasks through the pool's executor (per-pool speed)
// ---------------------------------------------------------------------------------------------

/**
 * One task running on the pool submits [count] no-op Runnables to the same [executor] (so they
 * go onto that worker's own queue and are stolen by the others); each decrements a shared
 * counter, and the one that reaches zero stops the clock. The time is taken inside the pool,
 * from the start of the submitting task to the end of the last task, so the wake-up of the
 * pool by the outside submission is not part of it. [run] returns nanoseconds per task.
 *
 * Used by the report's pool-instance spread (several pools in one JVM, each timed on its own)
 * and by `InPoolSubmitBenchmark`. The tasks are preallocated.
 */
class InPoolSubmit(private val executor: Executor, val count: Int = 10_000) {
    private val remaining = AtomicInteger()
    @Volatile private var started = 0L
    @Volatile private var ended = 0L
    @Volatile private var done = CountDownLatch(0)
    private val child = Runnable {
        val r = remaining.decrementAndGet()
        if (r == 0) {
            ended = System.nanoTime()
            done.countDown()
        }
    }
    private val parent = Runnable {
        started = System.nanoTime()
        val ex = executor
        for (i in 0 until count) ex.execute(child)
    }

    /** One burst; nanoseconds per task, from the submitting task's start to the last task's end. */
    fun run(): Double {
        val latch = CountDownLatch(1)
        done = latch
        remaining.set(count)
        executor.execute(parent)
        if (!latch.await(WAIT_LIMIT_SECONDS, TimeUnit.SECONDS)) {
            throw WrongResult("in-pool submit: only ${count - remaining.get()} of $count tasks ran within $WAIT_LIMIT_SECONDS s")
        }
        if (remaining.get() != 0) throw WrongResult("in-pool submit: a task ran more than once (remaining = ${remaining.get()})")
        return (ended - started).toDouble() / count
    }
}

// ---------------------------------------------------------------------------------------------
// Allocation per dispatched Runnable
// ---------------------------------------------------------------------------------------------

/**
 * Dispatches one preallocated no-op `Runnable` [batch] times from the calling thread and waits
 * for all to run, without allocating: the last task unparks the caller, which parks until the
 * counter reaches zero. Whatever is allocated during [run] is the executor's own cost (its task
 * wrappers, queue nodes, ...). Meant for JMH `-prof gc` (`gc.alloc.rate.norm` per operation
 * with `@OperationsPerInvocation(batch)` = bytes per dispatch).
 */
class DispatchDrain(private val executor: Executor, val batch: Int) {
    private val remaining = AtomicInteger()
    @Volatile private var waiter: Thread? = null
    private val task = Runnable {
        val r = remaining.decrementAndGet()
        if (r == 0) LockSupport.unpark(waiter)
    }

    fun run() {
        if (remaining.get() != 0) throw WrongResult("dispatch batch of $batch: a task ran more than once")
        waiter = Thread.currentThread()
        remaining.set(batch)
        val ex = executor
        for (i in 0 until batch) ex.execute(task)
        val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_LIMIT_SECONDS)
        while (true) {
            val r = remaining.get()
            if (r == 0) return
            if (r < 0) throw WrongResult("dispatch batch of $batch: a task ran more than once")
            if (System.nanoTime() > deadline) throw WrongResult("dispatch batch of $batch: $r tasks not run within $WAIT_LIMIT_SECONDS s")
            LockSupport.parkNanos(this, 10_000_000L)
        }
    }
}
