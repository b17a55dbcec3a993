package dev.stealing

import io.micrometer.core.instrument.FunctionCounter
import io.micrometer.core.instrument.Gauge
import io.micrometer.core.instrument.MeterRegistry
import io.micrometer.core.instrument.MultiGauge
import io.micrometer.core.instrument.Tag
import io.micrometer.core.instrument.Tags
import io.micrometer.core.instrument.binder.BaseUnits
import io.micrometer.core.instrument.binder.MeterBinder
import java.lang.ref.WeakReference

/**
 * Publishes a pool's [StealingDispatcher.stats] to a Micrometer [MeterRegistry]:
 *
 * ```kotlin
 * StealingMetrics(pool, Tags.of("service", "search")).bindTo(registry)
 * ```
 * ```java
 * new StealingMetrics(pool, Tags.of("service", "search")).bindTo(registry);
 * ```
 *
 * Every meter carries the tag `name` = the pool's name, plus [tags]. Where Micrometer's own
 * `ExecutorServiceMetrics` has a meter for the same thing (for `ThreadPoolExecutor`, or else
 * for `ForkJoinPool`), the meter here has its name, description and base unit, so existing
 * executor dashboards and alerts work unchanged: `executor.completed`, `executor.active`,
 * `executor.queued`, `executor.pool.size` and so on; this pool's own are named `stealing.*`.
 * The meters, their types and the [StealingStats] property each one reads are listed in one
 * place, the "Micrometer" section of `docs/observability.md` in the repository (a test holds
 * that list to the meters registered here).
 *
 * Micrometer's `executor.idle` is not published: there it is a timer of the time tasks wait in
 * the queue, which would cost a clock read per task; the idle thread count is
 * `stealing.threads.idle`.
 *
 * Fair queues come and go while the pool runs, so their gauges follow: the set of
 * `stealing.fair.queued` gauges is brought up to date at [bindTo] and whenever `executor.queued`
 * is read (a registry reads every gauge on each publication or scrape), so a fair queue created
 * after binding gets its gauge at the next read of `executor.queued`, and one that has left the
 * pool (closed and drained) loses it then.
 *
 * Cost: nothing while nobody reads. Each read of a meter takes one [StealingStats] snapshot
 * (sums over the workers and the fair queues, under the pool's lock but without pausing the
 * workers), so a scrape costs about twenty snapshots; the counters themselves are always on.
 *
 * Like Micrometer's binders, the meters hold the dispatcher weakly: once it is garbage, they
 * read `NaN`. `io.micrometer:micrometer-core` is an optional dependency of this library: it must
 * be on the class path to use this class, and is needed for nothing else.
 *
 * @param dispatcher the pool to publish.
 * @param tags added to every meter, after `name`.
 */
public class StealingMetrics @JvmOverloads constructor(
    private val dispatcher: StealingDispatcher,
    tags: Iterable<Tag> = emptyList(),
) : MeterBinder {
    private val tags: Tags = Tags.of(tags).and("name", dispatcher.pool.name)

    /**
     * Registers this pool's meters (listed in `docs/observability.md`) in [registry].
     *
     * @param registry the registry to publish to.
     */
    override fun bindTo(registry: MeterRegistry) {
        counter(registry, "executor.completed", BaseUnits.TASKS,
            "The approximate total number of tasks that have completed execution") { executed }
        gauge(registry, "executor.active", BaseUnits.THREADS,
            "The approximate number of threads that are actively executing tasks") { (threads - idleThreads).coerceAtLeast(0) }
        gauge(registry, "executor.running", null,
            "An estimate of the number of worker threads that are not blocked waiting to join tasks or for other " +
                "managed synchronization threads") { (threads - idleThreads - blockedThreads).coerceAtLeast(0) }
        val fairQueues = FairQueueGauges(registry)
        Gauge.builder("executor.queued", dispatcher) { d ->
            val stats = d.stats()
            fairQueues.update(stats)
            stats.queuedTasks.toDouble()
        }.tags(tags).description("The approximate number of tasks that are queued for execution")
            .baseUnit(BaseUnits.TASKS).register(registry)
        gauge(registry, "executor.pool.size", BaseUnits.THREADS, "The current number of threads in the pool") { threads }
        gauge(registry, "executor.pool.core", BaseUnits.THREADS, "The core number of threads for the pool") { parallelism }
        gauge(registry, "executor.pool.max", BaseUnits.THREADS, "The maximum allowed number of threads in the pool") { maxThreads }
        gauge(registry, "executor.parallelism", BaseUnits.THREADS, "The targeted parallelism level of this pool") { parallelism }
        counter(registry, "executor.steals", null,
            "Estimate of the total number of tasks stolen from one thread's work queue by another. The reported value " +
                "underestimates the actual total number of steals when the pool is not quiescent") { steals }

        gauge(registry, "stealing.threads.idle", BaseUnits.THREADS, "Workers parked or about to park") { idleThreads }
        gauge(registry, "stealing.threads.blocked", BaseUnits.THREADS,
            "Workers inside a blocking region or presumed blocked; they do not count toward the parallelism") { blockedThreads }
        counter(registry, "stealing.threads.injected", BaseUnits.THREADS,
            "Extra threads started to compensate for blocked workers") { injectedThreads }
        counter(registry, "stealing.threads.retired", BaseUnits.THREADS,
            "Extra threads that retired after their keep-alive") { retiredThreads }
        counter(registry, "stealing.inlined", BaseUnits.TASKS,
            "Children run inline by awaitInline or ForkedTask.join instead of waiting for them") { inlined }
        counter(registry, "stealing.parks", null, "Times a worker parked") { parks }
        counter(registry, "stealing.rejected", BaseUnits.TASKS, "Tasks rejected because the pool was shut down") { rejected }
        counter(registry, "stealing.failed", BaseUnits.TASKS, "Tasks that threw (Executor path)") { failed }
        gauge(registry, "stealing.timers.pending", null, "Timers waiting for their deadline") { pendingTimers.sum() }
        counter(registry, "stealing.timers.fired", null, "Timers that came due and were taken to run") { timersFired }
        counter(registry, "stealing.timers.stolen", null, "Due timers taken over from a busy or blocked worker") { timersStolen }
        counter(registry, "stealing.timers.cancelled", null, "Timers cancelled before their deadline") { timersCancelled }
        fairQueues.update(dispatcher.stats())
    }

    private fun gauge(registry: MeterRegistry, name: String, unit: String?, description: String, value: StealingStats.() -> Int) {
        Gauge.builder(name, dispatcher) { it.stats().value().toDouble() }
            .tags(tags).description(description).baseUnit(unit).register(registry)
    }

    private fun counter(registry: MeterRegistry, name: String, unit: String?, description: String, value: StealingStats.() -> Long) {
        FunctionCounter.builder(name, dispatcher) { it.stats().value().toDouble() }
            .tags(tags).description(description).baseUnit(unit).register(registry)
    }

    /** The `stealing.fair.queued` gauges of one registry: one row per fair-queue name. */
    private inner class FairQueueGauges(registry: MeterRegistry) {
        private val gauge = MultiGauge.builder("stealing.fair.queued").tags(tags)
            .description("Tasks waiting in a fair queue").baseUnit(BaseUnits.TASKS).register(registry)
        private var names: Set<String>? = null // guarded by this

        /** Registers a gauge per fair queue of [stats] and removes those of queues gone, if the set changed. */
        @Synchronized
        fun update(stats: StealingStats) {
            val now = stats.fairQueues.mapTo(LinkedHashSet()) { it.name }
            if (now == names) return
            names = now
            // A row holds its object strongly: hold the dispatcher weakly, as the other meters do.
            val weak = WeakReference(dispatcher)
            gauge.register(now.map { queue ->
                MultiGauge.Row.of(Tags.of("queue", queue), weak) { ref ->
                    ref.get()?.stats()?.fairQueues?.sumOf { if (it.name == queue) it.depth else 0 }?.toDouble() ?: Double.NaN
                }
            }, true)
        }
    }
}
