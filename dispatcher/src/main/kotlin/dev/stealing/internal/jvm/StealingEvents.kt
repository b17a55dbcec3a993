package dev.stealing.internal.jvm

import jdk.jfr.Category
import jdk.jfr.Description
import jdk.jfr.Event
import jdk.jfr.FlightRecorder
import jdk.jfr.Label
import jdk.jfr.Name
import jdk.jfr.StackTrace

/*
 * JFR events of the pool, category "Stealing Dispatcher". Each is created only on a path that is
 * already slow (a successful steal, a park, a wake-up, a failure) and committed only when a
 * recording enables it: `isEnabled` is a field read that the JIT folds, and an event that is not
 * committed is not allocated once escape analysis has seen it. Record them with
 * `-XX:StartFlightRecording` or `jcmd <pid> JFR.start`, view them with `jfr print --categories
 * "Stealing Dispatcher" file.jfr` or JDK Mission Control.
 *
 * No event class is touched before JFR has started ([jfrStarted]): loading the first one sets up
 * JFR's Java side, about 250 ms on an idle 2-core machine and more on a busy one. Without
 * the gate that happened on a worker in its first steal, holding the task it had just stolen, and
 * a fresh pool's first burst of work ran on one worker meanwhile.
 */

/**
 * Whether JFR has started in this JVM (a recording was created by `-XX:StartFlightRecording`,
 * `jcmd JFR.start` or `jdk.jfr.Recording`), so that an event could be recorded; a read of one
 * static field. Before that, no recording can enable an event, and JFR's set-up cost is not ours
 * to pay. Event classes first loaded after a recording started are registered with it then.
 */
internal fun jfrStarted(): Boolean = FlightRecorder.isInitialized()

/** A worker took a task from another worker's deque. */
@Name("dev.stealing.Steal")
@Label("Steal")
@Category("Stealing Dispatcher")
@Description("A worker took the oldest task of another worker's deque")
@StackTrace(false)
internal class StealEvent : Event() {
    @Label("Pool") @JvmField var pool: String? = null
    @Label("Thief") @JvmField var thief: Int = 0
    @Label("Victim") @JvmField var victim: Int = 0
    @Label("Victim Queue Left") @JvmField var victimQueueLeft: Int = 0
}

/** A worker parked (the event's duration is the time it slept). */
@Name("dev.stealing.Park")
@Label("Worker Park")
@Category("Stealing Dispatcher")
@Description("A worker found no work, parked, and was woken (duration = time parked)")
@StackTrace(false)
internal class ParkEvent : Event() {
    @Label("Pool") @JvmField var pool: String? = null
    @Label("Worker") @JvmField var worker: Int = 0
}

/** A producer or searcher woke a parked worker. */
@Name("dev.stealing.Unpark")
@Label("Worker Unpark")
@Category("Stealing Dispatcher")
@Description("A parked worker was popped from the idle stack and unparked")
@StackTrace(false)
internal class UnparkEvent : Event() {
    @Label("Pool") @JvmField var pool: String? = null
    @Label("Worker") @JvmField var worker: Int = 0
}

/** A task submitted through the Executor path threw (or was rejected after acceptance). */
@Name("dev.stealing.TaskFailure")
@Label("Task Failure")
@Category("Stealing Dispatcher")
@Description("A task threw; the worker survived and the failure went to the exception handler")
@StackTrace(false)
internal class TaskFailureEvent : Event() {
    @Label("Pool") @JvmField var pool: String? = null
    @Label("Task Class") @JvmField var taskClass: String? = null
    @Label("Exception Class") @JvmField var exceptionClass: String? = null
    @Label("Message") @JvmField var message: String? = null
}

/** An extra worker thread was started because workers were blocked. */
@Name("dev.stealing.ThreadInjection")
@Label("Thread Injection")
@Category("Stealing Dispatcher")
@Description("An extra worker thread was started to compensate for blocked workers")
@StackTrace(false)
internal class ThreadInjectionEvent : Event() {
    @Label("Pool") @JvmField var pool: String? = null
    @Label("Worker") @JvmField var worker: Int = 0
}

/** An extra worker thread retired after its keep-alive. */
@Name("dev.stealing.ThreadRetirement")
@Label("Thread Retirement")
@Category("Stealing Dispatcher")
@Description("An extra worker thread stayed idle for its keep-alive and exited")
@StackTrace(false)
internal class ThreadRetirementEvent : Event() {
    @Label("Pool") @JvmField var pool: String? = null
    @Label("Worker") @JvmField var worker: Int = 0
}

/**
 * Timers were taken to fire 20 ms or more after their deadline (their worker was busy or
 * blocked). At most one event per worker per 20 ms; it counts the late batches it stands for.
 */
@Name("dev.stealing.LateTimer")
@Label("Late Timer")
@Category("Stealing Dispatcher")
@Description("A batch of timers (delay, withTimeout, delayed task) was taken to fire 20 ms or more after the earliest one's deadline; at most one event per worker per 20 ms")
@StackTrace(false)
internal class LateTimerEvent : Event() {
    @Label("Pool") @JvmField var pool: String? = null
    @Label("Worker") @JvmField var worker: Int = 0
    @Label("Timer") @Description("Kind of the earliest timer of the batch") @JvmField var timerClass: String? = null
    @Label("Lateness") @Description("Of the earliest timer of the batch") @jdk.jfr.Timespan(jdk.jfr.Timespan.NANOSECONDS) @JvmField var lateness: Long = 0
    @Label("Timers") @Description("Timers in the batch") @JvmField var timers: Int = 0
    @Label("Late Batches Skipped") @Description("Late batches of this worker since its previous event, not reported") @JvmField var lateBatchesSkipped: Int = 0
}
