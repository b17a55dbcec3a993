package dev.stealing.internal.worker

import java.time.Duration
import java.util.function.BiConsumer

/**
 * What the engine is configured with: the options a pool reads, already checked, in the
 * engine's own types. Built once per pool from the public `StealingOptions` at the API's edge
 * (`StealingOptions.toPoolConfig`), so that no engine class depends on the API; the meaning of
 * each is documented there, under the same name.
 *
 * @property propagateContext read by the API's executor only (the engine runs what it is given).
 * @property failureHandler receives the failures of tasks (and of a worker's own loop), or null
 *   for the failing thread's uncaught-exception handler.
 */
internal class PoolConfig(
    val daemon: Boolean,
    val failureHandler: BiConsumer<Runnable, Throwable>?,
    val spinRounds: Int,
    val globalCheckInterval: Int,
    val initialDequeCapacity: Int,
    val maxInlineDepth: Int,
    val propagateContext: Boolean,
    val maxThreads: Int,
    val keepAlive: Duration,
    val starvationInterval: Duration,
    val pinThreads: Boolean,
)
