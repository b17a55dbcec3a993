package dev.stealing

import dev.stealing.internal.idle.Ctl
import dev.stealing.internal.jvm.isContextPropagationPresent
import dev.stealing.internal.jvm.isCpuPinningPresent
import dev.stealing.internal.worker.PoolConfig
import java.time.Duration
import java.util.function.BiConsumer
import kotlin.time.toJavaDuration
import kotlin.time.toKotlinDuration

/**
 * Tuning and behaviour options of a [StealingDispatcher]. Immutable; derive variants with the
 * `with...` methods (Java) or named arguments (Kotlin):
 *
 * ```kotlin
 * StealingDispatcher(4, "compute", StealingOptions(daemon = false, keepAlive = 30.seconds))
 * ```
 * ```java
 * new StealingDispatcher(4, "compute", StealingOptions.DEFAULT.withDaemon(false).withKeepAlive(Duration.ofSeconds(30)));
 * ```
 *
 * The durations ([keepAlive], [starvationInterval]) are read as `java.time.Duration`; they can
 * be given as either a `kotlin.time.Duration` (`keepAlive = 30.seconds`, from Kotlin) or a
 * `java.time.Duration` (`keepAlive = Duration.ofSeconds(30)`, and from Java), both of one kind
 * in one call.
 *
 * Every value is checked when the options are created; a bad one throws
 * [IllegalArgumentException] naming the parameter and the value.
 *
 * @property daemon whether worker threads are daemon threads (default true, as for
 *   `Dispatchers.Default` and `ForkJoinPool`), so a forgotten pool does not keep the JVM alive.
 * @property exceptionHandler receives every exception thrown by a task submitted through the
 *   Executor path; null (default) reports to the worker thread's uncaught-exception handler.
 *   The worker survives either way. Coroutine failures follow kotlinx rules instead.
 * @property spinRounds how long a worker that has run out of work keeps looking before it
 *   parks, in steps of 64 spin-waits and one `Thread.yield()` (so a thread that needs the core
 *   gets it): after one steal round it makes `spinRounds` steps with steal rounds in between,
 *   further apart as the search goes on (after 1, 2, 4, then every 8 steps); a yield that
 *   kept it off the core for more than 100 microseconds ends the search (other threads want
 *   the core). Default 32: about 130 microseconds when the worker has a core to itself
 *   (measured times in docs/investigations/2026-11-28-a-searcher-that-yields.md). Higher
 *   values trade idle CPU for wake-up latency; 0 parks right after one round.
 * @property globalCheckInterval every this many tasks a worker looks at the global queue and at
 *   the oldest task of its own deque or of its yield queue first, so none of them starves (default 61).
 * @property initialDequeCapacity initial ring size of each worker's deque; a power of two in
 *   2..65536 (default 64). It grows as needed; small values are for tests.
 * @property maxInlineDepth how many tasks may be nested on one thread by wait-inlining and
 *   helping joins before a join falls back to suspending or blocking (default 256).
 * @property propagateContext whether tasks submitted through the Executor path ([StealingDispatcher.executor],
 *   [StealingDispatcher.fork]) run with the submitting thread's ThreadLocal context, as captured
 *   by `io.micrometer:context-propagation` (its registered `ThreadLocalAccessor`s); default
 *   false, as for JDK executors, and then it costs nothing. When true, that library must be on
 *   the class path. Coroutines are not affected: kotlinx context elements carry their context.
 * @property maxThreads most worker threads alive at once, counting the extra threads started
 *   while workers are blocked (in `blocking { }`, a blocking `ForkedTask.join`, or detected as
 *   stuck); at least `parallelism`. 0 (default) means `parallelism + 256`, as ForkJoinPool's
 *   default, capped at 2047.
 * @property keepAlive how long an extra thread stays idle before it retires (default 60 s, as
 *   ForkJoinPool and kotlinx's scheduler); a duration over 70 years (or `Duration.INFINITE`)
 *   means never. Core workers never retire.
 * @property pinThreads whether each core worker pins its thread to one CPU of the set the
 *   process may use (worker i to the i-th), through `net.openhft:affinity`, which must then be on
 *   the class path; default false. Where the OS or container does not allow it, the pool runs
 *   unpinned and [StealingStats.pinning] says why. Extra threads are never pinned.
 * @property starvationInterval how soon the pool notices a worker stuck in a task while work
 *   waits (default 100 ms; it looks twice per interval): one found stuck in a waiting state
 *   within one interval of the start of its wait is compensated for by another thread, one
 *   that stays RUNNABLE only after 10 intervals. Zero, or a duration too
 *   long to matter (over 70 years, or `Duration.INFINITE`), turns detection off (marked
 *   blocking still compensates). Otherwise it must be at least 10 ms, for two reasons. Each
 *   look wakes the monitor thread, which costs 25-50 us of CPU, the wake-up far more than the
 *   look at the workers (measured on a busy 2-vCPU VM: about 1% of a core at 10 ms and 0.2% at
 *   100 ms). And a worker in a CPU-only task is taken for blocked after 10 intervals:
 *   at 1 ms, 40 tasks of 30 ms on 2 workers had 5 extra threads started beside them; at 10 ms
 *   only a task of over 100 ms can be taken for blocked.
 */
public class StealingOptions(
    public val daemon: Boolean = true,
    public val exceptionHandler: TaskExceptionHandler? = null,
    public val spinRounds: Int = 32,
    public val globalCheckInterval: Int = 61,
    public val initialDequeCapacity: Int = 64,
    public val maxInlineDepth: Int = 256,
    public val propagateContext: Boolean = false,
    public val maxThreads: Int = 0,
    public val keepAlive: Duration = DEFAULT_KEEP_ALIVE,
    public val starvationInterval: Duration = DEFAULT_STARVATION_INTERVAL,
    public val pinThreads: Boolean = false,
) {
    /**
     * The options with [keepAlive] (and [starvationInterval]) as `kotlin.time.Duration`s:
     * `StealingOptions(keepAlive = 30.seconds)`. See the class documentation for the parameters.
     */
    public constructor(
        daemon: Boolean = true,
        exceptionHandler: TaskExceptionHandler? = null,
        spinRounds: Int = 32,
        globalCheckInterval: Int = 61,
        initialDequeCapacity: Int = 64,
        maxInlineDepth: Int = 256,
        propagateContext: Boolean = false,
        maxThreads: Int = 0,
        keepAlive: kotlin.time.Duration,
        starvationInterval: kotlin.time.Duration = DEFAULT_STARVATION_INTERVAL.toKotlinDuration(),
        pinThreads: Boolean = false,
    ) : this(
        daemon, exceptionHandler, spinRounds, globalCheckInterval, initialDequeCapacity, maxInlineDepth, propagateContext,
        maxThreads, keepAlive.toJavaDuration(), starvationInterval.toJavaDuration(), pinThreads,
    )

    /**
     * The options with [starvationInterval] as a `kotlin.time.Duration`:
     * `StealingOptions(starvationInterval = Duration.ZERO)`. See the class documentation for the
     * parameters.
     */
    public constructor(
        daemon: Boolean = true,
        exceptionHandler: TaskExceptionHandler? = null,
        spinRounds: Int = 32,
        globalCheckInterval: Int = 61,
        initialDequeCapacity: Int = 64,
        maxInlineDepth: Int = 256,
        propagateContext: Boolean = false,
        maxThreads: Int = 0,
        keepAlive: Duration = DEFAULT_KEEP_ALIVE,
        starvationInterval: kotlin.time.Duration,
        pinThreads: Boolean = false,
    ) : this(
        daemon, exceptionHandler, spinRounds, globalCheckInterval, initialDequeCapacity, maxInlineDepth, propagateContext,
        maxThreads, keepAlive, starvationInterval.toJavaDuration(), pinThreads,
    )

    init {
        require(spinRounds >= 0) { "spinRounds must be >= 0, was $spinRounds" }
        require(globalCheckInterval >= 1) { "globalCheckInterval must be >= 1, was $globalCheckInterval" }
        require(initialDequeCapacity >= 2 && initialDequeCapacity and (initialDequeCapacity - 1) == 0) {
            "initialDequeCapacity must be a power of two >= 2, was $initialDequeCapacity"
        }
        require(initialDequeCapacity <= MAX_INITIAL_DEQUE_CAPACITY) {
            "initialDequeCapacity must be at most $MAX_INITIAL_DEQUE_CAPACITY (deques grow as needed), was $initialDequeCapacity"
        }
        require(maxInlineDepth >= 0) { "maxInlineDepth must be >= 0, was $maxInlineDepth" }
        require(maxThreads in 0..Ctl.MAX_THREADS) { "maxThreads must be in 0..${Ctl.MAX_THREADS}, was $maxThreads" }
        require(!keepAlive.isNegative && !keepAlive.isZero) { "keepAlive must be positive, was $keepAlive" }
        require(!starvationInterval.isNegative) { "starvationInterval must be >= 0, was $starvationInterval" }
        require(starvationInterval.isZero || starvationInterval >= MIN_STARVATION_INTERVAL) {
            "starvationInterval must be zero (detection off) or at least ${MIN_STARVATION_INTERVAL.toMillis()} ms, " +
                "was $starvationInterval (${starvationInterval.toKotlinDuration()})"
        }
        require(!pinThreads || isCpuPinningPresent()) {
            "pinThreads = true needs net.openhft:affinity on the class path (or, as module affinity, in the module graph)"
        }
        require(!propagateContext || isContextPropagationPresent()) {
            "propagateContext = true needs io.micrometer:context-propagation on the class path (or, as module context.propagation, in the module graph)"
        }
    }

    /** A copy with [daemon] replaced. */
    public fun withDaemon(daemon: Boolean): StealingOptions = copy(daemon = daemon)

    /** A copy with [exceptionHandler] replaced. */
    public fun withExceptionHandler(exceptionHandler: TaskExceptionHandler?): StealingOptions =
        copy(exceptionHandler = exceptionHandler)

    /** A copy with [spinRounds] replaced. */
    public fun withSpinRounds(spinRounds: Int): StealingOptions = copy(spinRounds = spinRounds)

    /** A copy with [globalCheckInterval] replaced. */
    public fun withGlobalCheckInterval(globalCheckInterval: Int): StealingOptions =
        copy(globalCheckInterval = globalCheckInterval)

    /** A copy with [initialDequeCapacity] replaced. */
    public fun withInitialDequeCapacity(initialDequeCapacity: Int): StealingOptions =
        copy(initialDequeCapacity = initialDequeCapacity)

    /** A copy with [maxInlineDepth] replaced. */
    public fun withMaxInlineDepth(maxInlineDepth: Int): StealingOptions = copy(maxInlineDepth = maxInlineDepth)

    /** A copy with [propagateContext] replaced. */
    public fun withPropagateContext(propagateContext: Boolean): StealingOptions = copy(propagateContext = propagateContext)

    /** A copy with [maxThreads] replaced. */
    public fun withMaxThreads(maxThreads: Int): StealingOptions = copy(maxThreads = maxThreads)

    /** A copy with [keepAlive] replaced. */
    public fun withKeepAlive(keepAlive: Duration): StealingOptions = copy(keepAlive = keepAlive)

    /** A copy with [keepAlive] replaced (Kotlin: `withKeepAlive(30.seconds)`). */
    public fun withKeepAlive(keepAlive: kotlin.time.Duration): StealingOptions = copy(keepAlive = keepAlive.toJavaDuration())

    /** A copy with [starvationInterval] replaced. */
    public fun withStarvationInterval(starvationInterval: Duration): StealingOptions =
        copy(starvationInterval = starvationInterval)

    /** A copy with [starvationInterval] replaced (Kotlin: `withStarvationInterval(50.milliseconds)`). */
    public fun withStarvationInterval(starvationInterval: kotlin.time.Duration): StealingOptions =
        copy(starvationInterval = starvationInterval.toJavaDuration())

    /** A copy with [pinThreads] replaced. */
    public fun withPinThreads(pinThreads: Boolean): StealingOptions = copy(pinThreads = pinThreads)

    private fun copy(
        daemon: Boolean = this.daemon,
        exceptionHandler: TaskExceptionHandler? = this.exceptionHandler,
        spinRounds: Int = this.spinRounds,
        globalCheckInterval: Int = this.globalCheckInterval,
        initialDequeCapacity: Int = this.initialDequeCapacity,
        maxInlineDepth: Int = this.maxInlineDepth,
        propagateContext: Boolean = this.propagateContext,
        maxThreads: Int = this.maxThreads,
        keepAlive: Duration = this.keepAlive,
        starvationInterval: Duration = this.starvationInterval,
        pinThreads: Boolean = this.pinThreads,
    ) = StealingOptions(
        daemon, exceptionHandler, spinRounds, globalCheckInterval, initialDequeCapacity, maxInlineDepth, propagateContext,
        maxThreads, keepAlive, starvationInterval, pinThreads,
    )

    /** The engine's configuration: these options in its own types. */
    @JvmSynthetic
    internal fun toPoolConfig(): PoolConfig = PoolConfig(
        daemon, exceptionHandler?.let { h -> BiConsumer { task, e -> h.handleException(task, e) } }, spinRounds,
        globalCheckInterval, initialDequeCapacity, maxInlineDepth, propagateContext, maxThreads, keepAlive,
        starvationInterval, pinThreads,
    )

    override fun toString(): String =
        "StealingOptions(daemon=$daemon, exceptionHandler=$exceptionHandler, spinRounds=$spinRounds, " +
            "globalCheckInterval=$globalCheckInterval, initialDequeCapacity=$initialDequeCapacity, " +
            "maxInlineDepth=$maxInlineDepth, propagateContext=$propagateContext, maxThreads=$maxThreads, " +
            "keepAlive=$keepAlive, starvationInterval=$starvationInterval, pinThreads=$pinThreads)"

    public companion object {
        // Before DEFAULT, which needs them.
        private val DEFAULT_KEEP_ALIVE: Duration = Duration.ofSeconds(60)
        private val DEFAULT_STARVATION_INTERVAL: Duration = Duration.ofMillis(100)

        /** Shortest [starvationInterval] other than zero (the property says why). */
        private val MIN_STARVATION_INTERVAL: Duration = Duration.ofMillis(10)

        /** The defaults. */
        @JvmField
        public val DEFAULT: StealingOptions = StealingOptions()

        /** Largest [initialDequeCapacity]: 64K slots; a deque grows beyond that as needed. */
        private const val MAX_INITIAL_DEQUE_CAPACITY = 1 shl 16
    }
}

/** Receives exceptions thrown by tasks submitted through the Executor path. */
public fun interface TaskExceptionHandler {
    /**
     * Called on the worker thread that ran [task] (or on the thread that rejected it) with the
     * exception [exception]. Exceptions thrown from here are ignored; the worker lives on.
     *
     * @param task the task that threw, or that was rejected.
     * @param exception what it threw, or the rejection.
     */
    public fun handleException(task: Runnable, exception: Throwable)
}
