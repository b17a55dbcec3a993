package dev.stealing.internal.worker

import dev.stealing.internal.idle.Ctl
import dev.stealing.internal.idle.ParkState
import java.util.concurrent.atomic.AtomicReferenceArray

/**
 * The pool's worker slots. Power-of-two sized for the odd-stride steal scan, doubled (copied
 * under the pool's lock) when an extra thread needs a slot beyond it. Slots are written under
 * the pool's lock with release and read with acquire, so a re-scan sees every worker started
 * before it; a worker keeps its slot for life, and a retired worker's slot is reused once its
 * node is off the idle stack.
 */
internal class WorkerTable(parallelism: Int) {
    @Volatile var slots = AtomicReferenceArray<Worker?>(tableSizeFor(parallelism))
        private set

    /** The worker in slot [index], which must be filled (the idle stack only links started workers). */
    operator fun get(index: Int): Worker = slots.getAcquire(index)!!

    /** The worker in slot [index], or null if the slot is empty. */
    fun getOrNull(index: Int): Worker? = slots.getAcquire(index)

    /** Started workers (including retired ones whose slot is not reused yet), for iteration (racy snapshot). */
    inline fun forEach(action: (Worker) -> Unit) {
        val table = slots
        for (i in 0 until table.length()) table.getAcquire(i)?.let(action)
    }

    /** Under the pool's lock: the lowest slot that is empty or holds a retired worker already unlinked; grows the table. */
    fun freeSlotLocked(): Int {
        val table = slots
        for (i in 0 until table.length()) {
            val w = table.get(i)
            if (w == null || w.idleNode.parkState() == ParkState.RETIRED) return i
        }
        val index = table.length()
        if (index >= Ctl.MAX_THREADS) return -1
        val bigger = AtomicReferenceArray<Worker?>(table.length() * 2)
        for (i in 0 until table.length()) bigger.set(i, table.get(i))
        slots = bigger // volatile: scans that read the old table miss only workers not yet started
        return index
    }

    /** Under the pool's lock: puts [w] in its slot; pairs with the getAcquire in scans. */
    fun setLocked(w: Worker) = slots.setRelease(w.index, w)

    /** Under the pool's lock: empties [w]'s slot (its thread could not be started). */
    fun clearLocked(w: Worker) = slots.setRelease(w.index, null)

    private companion object {
        fun tableSizeFor(n: Int): Int = Integer.highestOneBit(n * 2 - 1).coerceAtLeast(1)
    }
}
