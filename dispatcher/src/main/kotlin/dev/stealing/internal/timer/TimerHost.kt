package dev.stealing.internal.timer

/**
 * What a timer needs from the pool that holds it, and nothing more: placing and removing it,
 * the run state for periodic tasks, counting refusals, and whether a keyed coroutine may resume
 * where its timer fired. The pool's timer placement implements it; this package depends on
 * nothing above it.
 */
internal interface TimerHost {
    /** The pool's name, for messages. */
    val name: String

    /** Live periodic tasks; `shutdown()` cancels them (a running one when its run ends). */
    val periodicTasks: PeriodicTasks

    /** Places [timer] (on [keyedSlot]'s worker if not -1); false if the pool refuses it (shut down). */
    fun addTimer(timer: Timer, keyedSlot: Int = -1): Boolean

    /** Takes [timer] out of its heap if it is in one (true then). */
    fun removeTimer(timer: Timer): Boolean

    /** A timer was cancelled by its owner: out of its heap now, and counted. */
    fun timerCancelled(timer: Timer)

    /** Whether the pool is shut down (periodic tasks stop re-arming then). */
    fun isShutdown(): Boolean

    /** A timer was refused or abandoned: counted among the pool's rejected tasks. */
    fun countRejected()

    /** Whether the calling thread is the core worker in [slot], running a top-level task (not nested in a join). */
    fun onKeyedWorkerAtTopLevel(slot: Int): Boolean
}
