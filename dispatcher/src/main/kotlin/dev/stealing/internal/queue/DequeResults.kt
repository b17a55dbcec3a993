package dev.stealing.internal.queue

/**
 * How [WorkDeque.tryRemove] recognises its target among queued tasks: whether [task] is the one
 * the caller looks for, given the caller's [target] (a task, a job, ...). Implemented by
 * singletons ([SameTask], `CoroutineOfJob` in internal/join), so a removal allocates nothing.
 */
internal fun interface TaskMatcher {
    fun matches(task: Runnable, target: Any): Boolean
}

/** [TaskMatcher] for a target that is itself the queued task (a `ForkedTask`). */
internal object SameTask : TaskMatcher {
    override fun matches(task: Runnable, target: Any): Boolean = task === target
}

/**
 * Outcome of [WorkDeque.tryRemove], without allocating: the removed task or none, and whether
 * the caller must publish the deque again (see [WorkDeque.tryRemove] for exactly when).
 */
@JvmInline
internal value class Removal private constructor(private val value: Any?) {
    /** The removed task, or null if none was removed. */
    val task: Runnable? get() = value as? Runnable

    /**
     * The removal may have hidden other queued tasks from thieves and re-scans: the caller must
     * publish them again like a push (full fence, then signal), docs/parking.md "Hiding".
     */
    val mustRepublish: Boolean get() = value != null

    override fun toString(): String = when {
        value == null -> "None"
        value === HID_MARK -> "MissedAfterHiding"
        else -> "Removed($value)"
    }

    companion object {
        private val HID_MARK = Any()

        /** No task removed, nothing hidden: nothing matched, or the newest task matched and was stolen. */
        val NONE = Removal(null)

        /** No task removed (the match was stolen), but tasks above it were hidden meanwhile. */
        val MISSED_AFTER_HIDING = Removal(HID_MARK)

        /** [task] removed; conservatively [mustRepublish]. */
        fun removed(task: Runnable) = Removal(task)
    }
}

/**
 * Outcome of [WorkDeque.steal]: Empty, Success(task) or Retry, without allocating.
 * Retry means the deque is not known to be empty: the thief lost a race with another taker, or
 * the owner's [WorkDeque.tryRemove] had `bottom` lowered below queued tasks.
 */
@JvmInline
internal value class StealResult private constructor(private val value: Any?) {
    val isEmpty: Boolean get() = value == null
    val isRetry: Boolean get() = value === RETRY_MARK

    /** The stolen task, or null for Empty and Retry. */
    val taskOrNull: Runnable? get() = value as? Runnable

    override fun toString(): String = when {
        isEmpty -> "Empty"
        isRetry -> "Retry"
        else -> "Success($value)"
    }

    companion object {
        private val RETRY_MARK = Any()
        val EMPTY = StealResult(null)
        val RETRY = StealResult(RETRY_MARK)
        fun success(task: Runnable) = StealResult(task)
    }
}
