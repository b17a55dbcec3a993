package dev.stealing.internal.worker

import dev.stealing.internal.idle.enterBlocking
import dev.stealing.internal.idle.exitBlocking
import java.util.concurrent.ForkJoinPool
import java.util.concurrent.ForkJoinWorkerThread

/** `dev.stealing.blocking` without the `suspend` (for `StealingDispatcher.managedBlock` and joins). */
internal fun <T> runBlockingRegion(block: () -> T): T {
    val t = Thread.currentThread()
    if (t is Worker) {
        t.enterBlocking()
        try {
            return block()
        } finally {
            t.exitBlocking()
        }
    }
    if (t is ForkJoinWorkerThread) {
        val blocker = CallingBlocker(block)
        ForkJoinPool.managedBlock(blocker)
        return blocker.result()
    }
    return block()
}

/**
 * `StealingDispatcher.managedBlock`: [blocker] (`block()` until it or `isReleasable()` returns
 * true) as a blocking region of the calling worker; on any other thread
 * `ForkJoinPool.managedBlock(blocker)`.
 */
internal fun runManagedBlocker(blocker: ForkJoinPool.ManagedBlocker) {
    if (Thread.currentThread() !is Worker) return ForkJoinPool.managedBlock(blocker)
    if (blocker.isReleasable) return
    runBlockingRegion {
        while (!blocker.isReleasable && !blocker.block()) { /* until released */ }
    }
}

/** Runs a block once as a `ForkJoinPool.ManagedBlocker`. */
internal class CallingBlocker<T>(private val block: () -> T) : ForkJoinPool.ManagedBlocker {
    private var done = false
    private var value: T? = null

    override fun block(): Boolean {
        value = block.invoke()
        done = true
        return true
    }

    override fun isReleasable(): Boolean = done

    @Suppress("UNCHECKED_CAST")
    fun result(): T = value as T
}
