package dev.stealing.internal.timer

import java.util.concurrent.ConcurrentHashMap

/**
 * The pool's live periodic tasks ([DelayedTask] with a period), wherever each one is: in a
 * worker's timer heap or its inbox, taken out as due and queued on a deque or the global queue,
 * or running. At `shutdown()` ([cancelAll]) each one that waits is cancelled at once, and each
 * one whose run is under way is cancelled by that run when it ends, not re-added, as
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
 * iteration sees the task. A task registered after the iteration began was refused by that
 * check (its scheduler saw SHUTDOWN), so doing nothing for it is right.
 *
 * **A running task is left to its run, which ends it.** What the iteration does with a task it
 * sees ([DelayedTask.cancelAtShutdown]) depends on the task's `running` flag (volatile), which
 * only the thread running the task writes: true before the run reads the run state and starts
 * the body, false once the body has returned, before the run reads the run state again and
 * before the re-add (so the next run, which needs the re-add, never overlaps it). `shutdown()`
 * writes the run state, then reads the flag; a run writes the flag, then reads the run state:
 * Dekker pairs, all of them synchronization actions. For one run, `shutdown()`'s read of the
 * flag comes, in their total order:
 *
 * - before the run's write of true (it reads false): `shutdown()` cancels the task, and the
 *   run's read of the run state, after its write, sees SHUTDOWN: the body does not start;
 * - between the run's writes of true and false (it reads true): `shutdown()` leaves the task
 *   alone. The run's first read sees SHUTDOWN (it cancels the task instead of running it), or
 *   the body starts before the SHUTDOWN write: a run under way, as `ScheduledThreadPoolExecutor`
 *   has. Then the run's write of false comes after `shutdown()`'s read, so its second read sees
 *   SHUTDOWN and it cancels the task: the future completes after the body, never during it;
 * - after the run's write of false (it reads false): `shutdown()` cancels the task. The run may
 *   have missed SHUTDOWN in its second read and be re-adding the task: the re-add's own pair
 *   with `cancel()` (on the heap's volatile `heap` field and the future's state, in
 *   [DelayedTask.run]) takes it out of the heap again. Should a worker take it as due
 *   meanwhile, that next run's write of true comes after `shutdown()`'s read (which saw this
 *   run's false, the latest write), so it is in the first case: its body does not start.
 *
 * So every body that starts, starts before the SHUTDOWN write (but for a task `shutdownNow()`
 * handed back, which whoever runs it runs once), and nothing is re-added for good after it; a task is cancelled by `shutdown()` or by its own run, whichever comes first, and
 * the future's state ([java.util.concurrent.FutureTask]) lets only the first complete it. The
 * run that cancels ends on a worker, which then goes idle, so quiescence and
 * `awaitTermination` follow once the last run under way ends. A task taken out as due and
 * queued but not started is not running: it is cancelled at once, and the worker that runs it
 * later only sees the cancelled future.
 *
 * Registering costs one map insert per `scheduleAtFixedRate` / `scheduleWithFixedDelay` call,
 * not per run, and a run costs two volatile writes of the flag and one read of the run state
 * more. One-shot tasks are not registered: they keep running after `shutdown()`.
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

    /**
     * `shutdown()`, after the run state became SHUTDOWN: cancels every live periodic task that
     * is not running, and leaves each running one to its run, which cancels it when it ends.
     * Not once the pool is stopping: `shutdownNow()` has handed back the waiting ones,
     * uncancelled, and the others end without it (a run under way cancels its task; a task a
     * worker held is abandoned).
     */
    fun cancelAll() {
        for (task in live) task.cancelAtShutdown() // its done() removes it; the iterator tolerates that
    }

    /** Live periodic tasks (tests). */
    val size: Int get() = live.size
}
