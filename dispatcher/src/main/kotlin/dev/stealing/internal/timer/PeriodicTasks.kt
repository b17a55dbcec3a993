package dev.stealing.internal.timer

import java.util.concurrent.ConcurrentHashMap

/**
 * The pool's live periodic tasks ([DelayedTask] with a period), wherever each one is: in a
 * worker's timer heap or its inbox, taken out as due and queued on a deque or the global queue,
 * or running. `shutdown()` cancels every one of them ([cancelAll]), as
 * `ScheduledThreadPoolExecutor`'s default policy does; looking only in the timer heaps would miss
 * a task whose run is already due (queued like any task, a heap no longer holds it).
 *
 * A task is registered before it is offered to the pool and leaves when its future completes
 * (cancelled, or its run threw: [DelayedTask]'s `done()`), or when the pool refused it.
 *
 * **No periodic task outlives shutdown uncancelled.** The scheduler registers (a CAS or a
 * volatile write in the map) and then reads the run state ([WorkStealingPool.isShutdown],
 * volatile), refusing the task if it is shut down; `shutdown()` writes the run state (volatile)
 * and then iterates the map (volatile reads). Both pairs are synchronization actions, totally
 * ordered by the Java memory model: either the scheduler sees SHUTDOWN and refuses, or the
 * iteration sees the task and cancels it. A task registered after the iteration began was
 * refused by that check (its scheduler saw SHUTDOWN), so cancelling nothing for it is right.
 *
 * Registering costs one map insert per `scheduleAtFixedRate` / `scheduleWithFixedDelay` call,
 * not per run. One-shot tasks are not registered: they keep running after `shutdown()`.
 */
internal class PeriodicTasks {
    private val live: MutableSet<DelayedTask<*>> = ConcurrentHashMap.newKeySet()

    /** Before the task is offered to the pool; pairs with the run-state read that follows it. */
    fun register(task: DelayedTask<*>) {
        live += task
    }

    /** The task ended (its future completed) or the pool refused it. */
    fun remove(task: DelayedTask<*>) {
        live -= task
    }

    /** `shutdown()`, after the run state became SHUTDOWN: cancels every live periodic task. */
    fun cancelAll() {
        for (task in live) task.cancel(false) // its done() removes it; the iterator tolerates that
    }

    /** Live periodic tasks (tests). */
    val size: Int get() = live.size
}
