@file:OptIn(InternalCoroutinesApi::class) // kotlinx.coroutines.Delay: see the README on upgrades

package dev.stealing.internal.pool

import kotlinx.coroutines.CancellableContinuation
import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.Delay
import kotlinx.coroutines.DisposableHandle
import kotlinx.coroutines.InternalCoroutinesApi
import java.util.concurrent.Executor
import java.util.concurrent.RejectedExecutionException
import kotlin.coroutines.CoroutineContext

/**
 * The dispatcher returned by [StealingDispatcher.affinity]: every task dispatched through it
 * goes to the keyed queue ([KeyedQueue]) of one core worker, chosen by [affinityKey], and runs
 * there, one at a time, in dispatch order; it is never stolen. It is also an [Executor] with
 * the same guarantee ([StealingDispatcher.affinityExecutor]). A `delay` keeps its timer on the
 * key's worker and resumes there.
 */
internal class AffinityDispatcher(
    private val pool: WorkStealingPool,
    private val affinityKey: Any,
) : CoroutineDispatcher(), Executor, Delay {
    /** The core worker slot serving [affinityKey]. */
    private val slot = slotFor(affinityKey, pool.parallelism)

    init {
        pool.threads.startCoreWorkers()
    }

    override fun isDispatchNeeded(context: CoroutineContext): Boolean = true

    override fun dispatch(context: CoroutineContext, block: Runnable) {
        if (!pool.executeKeyed(slot, block)) rejectContinuation(context, block, "${pool.label()} is closed")
    }

    /** Executor form: the same worker, in order. */
    override fun execute(command: Runnable) {
        if (!pool.executeKeyed(slot, command)) throw RejectedExecutionException("${pool.label()} is shut down; rejected $command")
    }

    /** The timer is kept by the key's worker; if another worker fires it, the coroutine is dispatched back. */
    override fun scheduleResumeAfterDelay(timeMillis: Long, continuation: CancellableContinuation<Unit>): Unit =
        pool.timers.scheduleResume(timeMillis, continuation, this, slot)

    override fun invokeOnTimeout(timeMillis: Long, block: Runnable, context: CoroutineContext): DisposableHandle =
        pool.timers.scheduleTimeout(timeMillis, block, context)

    override fun toString(): String = "${pool.name}.affinity($affinityKey)"

    override fun equals(other: Any?): Boolean =
        other is AffinityDispatcher && other.pool === pool && other.affinityKey == affinityKey

    override fun hashCode(): Int = System.identityHashCode(pool) * 31 + affinityKey.hashCode()

    companion object {
        /**
         * A slot in `0 until parallelism` for [key]: its `hashCode()` through a finalizing mix
         * (MurmurHash3's fmix32), so sequential ids and hash codes with structure in their low
         * bits still spread evenly.
         */
        fun slotFor(key: Any, parallelism: Int): Int {
            var h = key.hashCode()
            h = h xor (h ushr 16)
            h *= -0x7a143595 // 0x85ebca6b
            h = h xor (h ushr 13)
            h *= -0x3d4d51cb // 0xc2b2ae35
            h = h xor (h ushr 16)
            return Math.floorMod(h, parallelism)
        }
    }
}
