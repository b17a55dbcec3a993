package dev.stealing

import dev.stealing.internal.worker.runBlockingRegion

/**
 * Runs [block], which may block its thread (I/O, a lock, a latch, `Thread.sleep`), telling the
 * pool that runs the caller: while a [StealingDispatcher] worker is inside [block] it does not
 * count toward the pool's parallelism, so if work is waiting another thread runs in its place
 * (an idle worker, or an extra thread up to [StealingOptions.maxThreads]). Extra threads go
 * idle as soon as the blocked ones return and retire after [StealingOptions.keepAlive].
 *
 * ```kotlin
 * val body = blocking { socket.getInputStream().readNBytes(n) }
 * ```
 *
 * On a `ForkJoinPool` thread it uses `ForkJoinPool.managedBlock` (the same compensation there);
 * on any other thread it just runs [block]. [block] runs on the calling thread, and the caller
 * never suspends: this is a marker, not a thread switch (use `withContext(Dispatchers.IO)` for
 * that). Work dispatched through [StealingDispatcher.affinity] to a worker that is inside
 * [block] waits for it: keyed work never moves to another thread.
 */
public suspend fun <T> blocking(block: () -> T): T = runBlockingRegion(block)
