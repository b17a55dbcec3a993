package dev.stealing.internal.timer

import java.time.Duration

/**
 * A pending action with a deadline, held in a core worker's [TimerHeap] until it is due: a
 * coroutine's `delay` ([DelayResume]), a `withTimeout` ([TimeoutTimer]) or a Java delayed or
 * periodic task ([DelayedTask]).
 *
 * A timer offered by another thread waits in its heap's inbox until the owner (or a thief, or
 * the monitor) takes it in ([TimerHeap.offer]).
 *
 * When due, a worker takes it out of the heap and pushes it onto its own deque as an ordinary
 * task (the worker's `WorkerTimers`), so a burst of due timers is spread by stealing like any other work; [run]
 * then performs the action. Every kind ends exactly once: fired by [run], cancelled by its
 * owner (removed from the heap at once), or [abandon]ed when the pool stops; each kind's state
 * (a CAS, or the future's own) decides which of them wins.
 */
internal abstract class Timer(
    /**
     * `System.nanoTime()` at which it is due. Changed only while the timer is in no heap (a
     * periodic task's next run), so the heap's order never sees it change.
     */
    @JvmField var deadline: Long,
) : Runnable {
    /** Insertion order in its heap, to order equal deadlines; guarded by the heap's lock. */
    @JvmField var seq = 0L

    /**
     * Its index in [heap]'s array, or -1 (in no heap), or [TimerHeap.IN_INBOX] /
     * [TimerHeap.CANCELLED_IN_INBOX] while offered; guarded by the heap's lock (the offerer
     * writes it before its push publishes the timer).
     */
    @JvmField var heapIndex = -1

    /**
     * The heap holding it, or whose inbox holds it; null once taken. Written under that heap's
     * lock (by the offerer before its push), read without it to remove.
     */
    @Volatile @JvmField var heap: TimerHeap? = null

    /** The next older timer in its heap's inbox; written by the offerer before its push, cleared under the lock. */
    @JvmField var nextInInbox: Timer? = null

    /**
     * The pool stopped and this timer will never fire on it, nor be handed back by
     * `shutdownNow()` (which hands back a [DelayedTask] instead): end it.
     */
    abstract fun abandon(why: String)
}

/** Longest delay honoured: about 146 years, so the difference of two deadlines never overflows. */
internal const val MAX_DELAY_NANOS: Long = Long.MAX_VALUE / 2

/** The deadline [delayNanos] from now; zero or negative means now. */
internal fun deadlineAfterNanos(delayNanos: Long): Long =
    System.nanoTime() + delayNanos.coerceIn(0L, MAX_DELAY_NANOS)

/** The deadline [millis] milliseconds from now; zero or negative means now. */
internal fun deadlineAfterMillis(millis: Long): Long =
    deadlineAfterNanos(if (millis >= MAX_DELAY_NANOS / 1_000_000L) MAX_DELAY_NANOS else millis * 1_000_000L)

/**
 * [duration] in nanoseconds, or Long.MAX_VALUE ("never") if it is longer than about 73 years
 * (where nanosecond arithmetic on deadlines would overflow).
 */
internal fun nanosOrNever(duration: Duration): Long =
    if (duration.seconds >= Long.MAX_VALUE / 4 / 1_000_000_000) Long.MAX_VALUE else duration.toNanos()
