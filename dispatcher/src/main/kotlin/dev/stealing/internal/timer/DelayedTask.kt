package dev.stealing.internal.timer

import java.util.concurrent.Callable
import java.util.concurrent.Delayed
import java.util.concurrent.FutureTask
import java.util.concurrent.RunnableScheduledFuture
import java.util.concurrent.TimeUnit

/**
 * A task of [StealingExecutorService.schedule], [StealingExecutorService.scheduleAtFixedRate]
 * or [StealingExecutorService.scheduleWithFixedDelay], with `ScheduledThreadPoolExecutor`'s
 * semantics: cancelling removes it from its heap at once; a periodic task that throws (or is
 * cancelled) runs no more, and its future then holds the exception; a periodic task's future
 * never completes normally; `shutdown()` cancels a periodic task wherever it waits
 * ([PeriodicTasks]), and one whose run is under way when that run ends, while a one-shot task
 * still runs at its time.
 *
 * `shutdownNow()` hands it back uncancelled ([handBack]), as `ScheduledThreadPoolExecutor`
 * does; unlike there, running a handed-back task runs it (whoever runs the list elsewhere gets
 * the work done): a one-shot task runs and its future holds the result; a periodic task runs
 * once and its future is then cancelled, since no pool is left to repeat it.
 *
 * The future's state is a [FutureTask]'s ([body]): it decides between running and cancelling.
 */
internal class DelayedTask<V>(
    deadline: Long,
    callable: Callable<V>,
    /** 0 for one-shot; positive: fixed rate; negative: fixed delay of -period (as `ScheduledThreadPoolExecutor`). */
    private val period: Long,
    private val pool: TimerHost,
) : Timer(deadline), RunnableScheduledFuture<V> {
    private inner class Body(callable: Callable<V>) : FutureTask<V>(callable) {
        fun runOnePeriod(): Boolean = runAndReset()

        /** Completed (for a periodic task: cancelled or failed): it leaves the pool's live periodic tasks. */
        override fun done() {
            if (period != 0L) pool.periodicTasks.remove(this@DelayedTask)
        }
    }

    private val body = Body(callable)

    /**
     * Set by `shutdownNow()` on the tasks it returns, before it returns them: [run] then runs
     * the task instead of ending it. Volatile, as the list may be run on any thread.
     */
    @Volatile private var handedBack = false

    /** `shutdownNow()` returns this task, uncancelled: whoever runs it, runs it. */
    fun handBack() {
        handedBack = true
    }

    /**
     * True from the start of a periodic run ([run]) until its body has returned, before the task
     * is re-added: `shutdown()` leaves a running task to that run, which cancels it when it ends
     * ([cancelAtShutdown]). Written only by the thread running the task (runs never overlap: the
     * next run needs the re-add, which comes after this is cleared); volatile, as `shutdown()`
     * reads it on its own thread. The argument: [PeriodicTasks].
     */
    @Volatile private var running = false

    override fun run() {
        if (period == 0L) {
            body.run()
            return
        }
        val ran: Boolean
        running = true // then the run state is read: pairs with shutdown()'s write of it and its read of this in cancelAtShutdown()
        try {
            if (pool.isShutdown()) { // periodic tasks stop at shutdown
                if (handedBack) body.runOnePeriod() // run once by whoever took the list; nothing repeats it
                cancel(false)
                return
            }
            ran = body.runOnePeriod()
        } finally {
            running = false // then the run state is read again: the same pair, for the run's end
        }
        if (!ran) return // it threw or was cancelled: no more runs
        if (pool.isShutdown()) { // shutdown() came during the run and left the task to it
            cancel(false)
            return
        }
        val next = if (period > 0) deadline + period else deadlineAfterNanos(-period)
        deadline = if (next - System.nanoTime() > MAX_DELAY_NANOS) deadlineAfterNanos(MAX_DELAY_NANOS) else next
        if (!pool.addTimer(this)) { // refused: the pool is shut down
            cancel(false)
            return
        }
        // A cancel() that came between the run and the add found this task in no heap (also
        // shutdown()'s, which cancels every periodic task not running: PeriodicTasks). Dekker pair: the
        // add writes `heap` (volatile) before this reads the future's state, cancel() writes that
        // state before it reads `heap`. A shutdownNow() meanwhile takes it from the heap and
        // hands it back: it must stay uncancelled then, so the run state is not looked at here.
        if (body.isCancelled) pool.removeTimer(this)
    }

    /**
     * `shutdown()` ([PeriodicTasks.cancelAll]), after it wrote the run state: cancels this periodic
     * task now unless a run of it is under way; that run sees the run state afterwards and
     * cancels the task when it ends, as `ScheduledThreadPoolExecutor` lets a running periodic
     * task end its run.
     */
    fun cancelAtShutdown() {
        if (!running) cancel(false)
    }

    override fun cancel(mayInterruptIfRunning: Boolean): Boolean {
        val cancelled = body.cancel(mayInterruptIfRunning)
        if (cancelled) pool.timerCancelled(this)
        return cancelled
    }

    override fun isCancelled(): Boolean = body.isCancelled
    override fun isDone(): Boolean = body.isDone
    override fun get(): V = body.get()
    override fun get(timeout: Long, unit: TimeUnit): V = body.get(timeout, unit)
    override fun isPeriodic(): Boolean = period != 0L

    /** Time left until it is due (negative if overdue); a plain read of the deadline, which a 64-bit JVM never tears. */
    override fun getDelay(unit: TimeUnit): Long = unit.convert(deadline - System.nanoTime(), TimeUnit.NANOSECONDS)

    override fun compareTo(other: Delayed): Int {
        if (other === this) return 0
        if (other is Timer) {
            val d = deadline - other.deadline
            return if (d < 0) -1 else if (d > 0) 1 else seq.compareTo(other.seq)
        }
        return getDelay(TimeUnit.NANOSECONDS).compareTo(other.getDelay(TimeUnit.NANOSECONDS))
    }

    /** The pool stopped and nobody will hand it back (it was in transit on an exiting worker): cancelled. */
    override fun abandon(why: String) {
        cancel(false)
    }

    override fun toString(): String = "DelayedTask[${if (period == 0L) "one-shot" else "periodic"}, $body]"
}
