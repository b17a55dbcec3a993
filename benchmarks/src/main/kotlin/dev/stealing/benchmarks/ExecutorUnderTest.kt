package dev.stealing.benchmarks

import dev.stealing.StealingDispatcher
import dev.stealing.benchmarks.baselines.LockPool
import dev.stealing.benchmarks.baselines.LockWsqPool
import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.asCoroutineDispatcher
import kotlinx.coroutines.asExecutor
import java.util.concurrent.Executor
import java.util.concurrent.ExecutorService
import java.util.concurrent.Executors
import java.util.concurrent.ForkJoinPool
import java.util.concurrent.ScheduledExecutorService
import java.util.concurrent.ScheduledThreadPoolExecutor
import java.util.concurrent.ThreadFactory
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger

/**
 * One executor under test, seen both as a [java.util.concurrent.Executor] and as a coroutine
 * [CoroutineDispatcher]. Every benchmark and the report take one by [id]:
 *
 * | id | what |
 * |---|---|
 * | `stealing` | ours: `StealingDispatcher(parallelism)`; coroutine workloads use plain `await` |
 * | `stealing-inline` | the same pool; coroutine workloads use `awaitInline` |
 * | `stealing-forkjoin` | the same pool; divide-and-conquer coroutine workloads use `forkJoin` instead of `async` |
 * | `default` | `Dispatchers.Default` (shared, never closed); as Executor `Dispatchers.Default.asExecutor()` |
 * | `fjp` | `ForkJoinPool(parallelism)`; as dispatcher via `asCoroutineDispatcher()` |
 * | `fjp-common` | `ForkJoinPool.commonPool()` (shared, never closed; its own parallelism, `cores - 1` unless set by `java.util.concurrent.ForkJoinPool.common.parallelism`); `CompletableFuture` workloads only (with parallelism 1, `CompletableFuture` on JDK 17 runs a thread per stage instead) |
 * | `tpe` | `Executors.newFixedThreadPool(parallelism)` |
 * | `lock` | the single-lock pool of part 1 of Joe Duffy's 2008 thread-pool series, [LockPool] |
 * | `lockwsq` | the lock + work-stealing-queue pool of part 3 of that series, [LockWsqPool] |
 * | `single` | `Executors.newSingleThreadExecutor()` as a dispatcher: one thread whatever the parallelism (message-passing workloads only) |
 * | `stpe` | `ScheduledThreadPoolExecutor(parallelism)`, the JDK's scheduled executor; as dispatcher via `asCoroutineDispatcher()` (timer workloads only) |
 * | `stealing-affinity`, `affinity` | in the Pekko rows only ([PekkoShapes], which create their own actor systems; not created here): our Pekko executor with `affinity = on`, and Pekko's `affinity-pool-executor` (there `stealing`, `fjp` and `tpe` are our Pekko executor, `fork-join-executor` and `thread-pool-executor`) |
 *
 * Timers: `stealing` keeps them on its workers; `default` uses kotlinx's `DefaultExecutor`
 * thread; `fjp` uses the pool's own `schedule` on JDK 25 and later (kotlinx's executor
 * dispatchers use `schedule` when the executor is a `ScheduledExecutorService`, which
 * `ForkJoinPool` is from JDK 25 on: [forkJoinPoolSchedules]) and kotlinx's `DefaultExecutor` on
 * JDK 17.
 *
 * Parallelism is the number of available processors for all of them (`Dispatchers.Default`
 * uses `max(2, cores)`, which is the same on the 2-core machines this runs on). Create one per
 * trial and [close] it after: that shuts the pool down and joins its threads (it leaves
 * `Dispatchers.Default` alone).
 */
class ExecutorUnderTest private constructor(
    val id: String,
    val parallelism: Int,
    val executor: Executor,
    val dispatcher: CoroutineDispatcher,
    /** Coroutine workloads use `awaitInline` instead of `await` (only `stealing-inline`). */
    val awaitInline: Boolean,
    /** Divide-and-conquer coroutine workloads use `forkJoin` instead of `async` (only `stealing-forkjoin`). */
    val forkJoin: Boolean,
    /** Non-null for `stealing`, `stealing-inline` and `stealing-forkjoin`: the pool itself (for `fork`). */
    val stealing: StealingDispatcher?,
    /** Non-null for `fjp`: the pool itself (for `RecursiveTask`). */
    val forkJoinPool: ForkJoinPool?,
    /** Prefix of this executor's thread names and of no other executor's (for per-pool CPU accounting). */
    val threadNamePrefix: String,
    private val onClose: () -> Unit,
) : AutoCloseable {
    @Volatile private var closed = false

    override fun close() {
        if (closed) return
        closed = true
        onClose()
    }

    override fun toString(): String = id

    /**
     * This executor as a `ScheduledExecutorService`: ours (`pool.executor`), `stpe`, and `fjp` on
     * JDK 25 and later; null for the others.
     */
    val scheduler: ScheduledExecutorService? get() = executor as? ScheduledExecutorService

    companion object {
        /** Every executor id, in the order tables list them. */
        val ALL: List<String> = listOf(
            "stealing", "stealing-inline", "stealing-forkjoin", "stealing-affinity", "default", "fjp", "fjp-common", "tpe", "affinity",
            "lock", "lockwsq", "single", "stpe",
        )

        /**
         * The executors of Executor-path workloads (`stealing-inline` and `stealing-forkjoin` would
         * be the same as `stealing`; `single` runs the message-passing workloads only, `stpe` the timer
         * workloads only, `fjp-common` the `CompletableFuture` workloads only, `stealing-affinity` and
         * `affinity` the Pekko rows only).
         */
        val EXECUTORS: List<String> = ALL - "stealing-inline" - "stealing-forkjoin" - "single" - "stpe" - "fjp-common" - "stealing-affinity" - "affinity"

        /**
         * Whether this JVM's `ForkJoinPool` is a `ScheduledExecutorService` (JDK 25 and later):
         * then `fjp` has `schedule`, and its coroutine dispatcher runs `delay` and `withTimeout` on
         * the pool's own timers; before that, kotlinx sends them to its `DefaultExecutor` thread.
         * Checked at run time: the module is compiled against the JDK 17 API.
         */
        val forkJoinPoolSchedules: Boolean = ScheduledExecutorService::class.java.isAssignableFrom(ForkJoinPool::class.java)

        val CORES: Int = Runtime.getRuntime().availableProcessors()

        fun create(id: String, parallelism: Int = CORES): ExecutorUnderTest {
            require(parallelism >= 1) { "parallelism must be >= 1, was $parallelism" }
            return when (id) {
                "stealing", "stealing-inline", "stealing-forkjoin" -> {
                    val name = "bench-$id"
                    val pool = StealingDispatcher(parallelism, name)
                    ExecutorUnderTest(
                        id, parallelism, pool.executor, pool, id == "stealing-inline", id == "stealing-forkjoin", pool, null, "$name-worker-",
                    ) { pool.close() }
                }
                "default" -> ExecutorUnderTest(
                    id, parallelism, Dispatchers.Default.asExecutor(), Dispatchers.Default, false, false, null, null,
                    "DefaultDispatcher-worker-",
                ) {}
                "fjp" -> {
                    val name = "bench-fjp"
                    val counter = AtomicInteger()
                    val pool = ForkJoinPool(parallelism, { p ->
                        ForkJoinPool.defaultForkJoinWorkerThreadFactory.newThread(p).apply { this.name = "$name-${counter.getAndIncrement()}" }
                    }, null, false)
                    ExecutorUnderTest(id, parallelism, pool, pool.asCoroutineDispatcher(), false, false, null, pool, "$name-") { shutdownAndJoin(pool) }
                }
                "fjp-common" -> {
                    // Shared by the whole JVM: never shut down. Its threads are named by the JDK.
                    val pool = ForkJoinPool.commonPool()
                    ExecutorUnderTest(id, ForkJoinPool.getCommonPoolParallelism(), pool, pool.asCoroutineDispatcher(), false, false, null, pool, "ForkJoinPool.commonPool-worker-") {}
                }
                "tpe" -> {
                    val name = "bench-tpe"
                    val pool = Executors.newFixedThreadPool(parallelism, namedDaemons(name))
                    ExecutorUnderTest(id, parallelism, pool, pool.asCoroutineDispatcher(), false, false, null, null, "$name-") { shutdownAndJoin(pool) }
                }
                "lock" -> {
                    val name = "bench-lock"
                    val pool = LockPool(parallelism, name)
                    ExecutorUnderTest(id, parallelism, pool, pool.asCoroutineDispatcher(), false, false, null, null, "$name-") { pool.close() }
                }
                "lockwsq" -> {
                    val name = "bench-lockwsq"
                    val pool = LockWsqPool(parallelism, name)
                    ExecutorUnderTest(id, parallelism, pool, pool.asCoroutineDispatcher(), false, false, null, null, "$name-") { pool.close() }
                }
                "single" -> {
                    val name = "bench-single"
                    val pool = Executors.newSingleThreadExecutor(namedDaemons(name))
                    ExecutorUnderTest(id, 1, pool, pool.asCoroutineDispatcher(), false, false, null, null, "$name-") { shutdownAndJoin(pool) }
                }
                "stpe" -> {
                    val name = "bench-stpe"
                    val pool = ScheduledThreadPoolExecutor(parallelism, namedDaemons(name))
                    ExecutorUnderTest(id, parallelism, pool, pool.asCoroutineDispatcher(), false, false, null, null, "$name-") { shutdownAndJoin(pool) }
                }
                "stealing-affinity", "affinity" -> throw IllegalArgumentException("$id exists in the Pekko rows only (PekkoShapes)")
                else -> throw IllegalArgumentException("executor must be one of $ALL, was '$id'")
            }
        }

        private fun namedDaemons(prefix: String): ThreadFactory {
            val counter = AtomicInteger()
            return ThreadFactory { r -> Thread(r, "$prefix-${counter.getAndIncrement()}").apply { isDaemon = true } }
        }

        private fun shutdownAndJoin(pool: ExecutorService) {
            pool.shutdown()
            check(pool.awaitTermination(1, TimeUnit.MINUTES)) { "$pool did not terminate within a minute" }
        }
    }
}
