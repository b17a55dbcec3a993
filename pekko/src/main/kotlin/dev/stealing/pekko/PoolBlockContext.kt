package dev.stealing.pekko

import dev.stealing.StealingDispatcher
import scala.Function0
import scala.concurrent.BlockContext
import scala.concurrent.CanAwait
import java.util.concurrent.ForkJoinPool

/**
 * What `scala.concurrent.blocking { }` does inside an actor on our executor: the block runs as a
 * blocking region of the worker ([StealingDispatcher.managedBlock]), so the pool starts or wakes
 * another thread for the other actors meanwhile, as Pekko's `fork-join-executor` does through
 * `ForkJoinPool.managedBlock`. Scala finds a thread's block context in a thread-local that
 * [BlockContext.withBlockContext] sets around a call; [MailboxRun] sets it around each mailbox
 * run, since the pool's threads are not Scala's.
 */
internal object PoolBlockContext : BlockContext {
    override fun <T> blockOn(thunk: Function0<T>, permission: CanAwait): T {
        val blocker = ThunkBlocker(thunk)
        StealingDispatcher.managedBlock(blocker)
        return blocker.result()
    }

    /** Runs [thunk] once, as a `ManagedBlocker`, keeping its result. */
    private class ThunkBlocker<T>(private val thunk: Function0<T>) : ForkJoinPool.ManagedBlocker {
        private var done = false
        private var value: T? = null

        override fun block(): Boolean {
            value = thunk.apply()
            done = true
            return true
        }

        override fun isReleasable(): Boolean = done

        @Suppress("UNCHECKED_CAST")
        fun result(): T = value as T
    }
}

/**
 * A mailbox run ([mailbox]) with [PoolBlockContext] as the thread's block context while it runs;
 * one object per run, a `Function0` for [BlockContext.withBlockContext] as well.
 */
internal class MailboxRun(val mailbox: Runnable) : Runnable, scala.runtime.AbstractFunction0<Unit>() {
    override fun run() {
        BlockContext.withBlockContext(PoolBlockContext, this)
    }

    override fun apply() {
        mailbox.run()
    }

    override fun toString(): String = mailbox.toString()
}
