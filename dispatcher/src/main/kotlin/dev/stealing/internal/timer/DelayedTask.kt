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
 * never completes normally; `shutdown()` cancels a periodic task wherever it is
 * ([PeriodicTasks]) while a one-shot task still runs at its time.
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

    override fun run() {
        if (period == 0L) {
            body.run()
            return
        }
        if (pool.isShutdown()) { // periodic tasks stop at shutdown
            if (handedBack) body.runOnePeriod() // run once by whoever took the list; nothing repeats it
            cancel(false)
            return
        }
        if (!body.runOnePeriod()) return // it threw or was cancelled: no more runs
        val next = if (period > 0) deadline + period else deadlineAfterNanos(-period)
        deadline = if (next - System.nanoTime() > MAX_DELAY_NANOS) deadlineAfterNanos(MAX_DELAY_NANOS) else next
        if (!pool.addTimer(this)) { // refused: the pool is shut down
            cancel(false)
            return
        }
        // A cancel() that came between the run and the add found this task in no heap (also
        // shutdown()'s, which cancels every live periodic task: PeriodicTasks). Dekker pair: the
        // add writes `heap` (volatile) before this reads the future's state, cancel() writes that
        // state before it reads `heap`. A shutdownNow() meanwhile takes it from the heap and
        // hands it back: it must stay uncancelled then, so the run state is not looked at here.
        if (body.isCancelled) pool.removeTimer(this)
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
