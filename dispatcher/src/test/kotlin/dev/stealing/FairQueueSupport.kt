package dev.stealing

import java.util.concurrent.atomic.AtomicIntegerArray

/**
 * A task of the fair-queue ledger tests (FairQueueSpec, FairQueueCloseSpec): counts its runs in
 * [runs] at [id], then does [then] (on the worker).
 */
internal class LedgerTask(val id: Int, private val runs: AtomicIntegerArray, private val then: () -> Unit = {}) : Runnable {
    override fun run() {
        runs.incrementAndGet(id)
        then()
    }

    override fun toString(): String = "LedgerTask($id)"
}
