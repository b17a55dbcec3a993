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
 * A mailbox run ([mailbox]) with [PoolBlockContext] as the thread's block context; one object per
 * run, a `Function0` for [BlockContext.withBlockContext] as well.
 *
 * Through Scala's own thread-local ([ScalaContextLocal]) the run sets the block context on its
 * worker once and leaves it there: the pool's threads run this dispatcher's work, all of it
 * wrapped so (a task given to the pool directly, through `dispatcherOf`, on such a worker sees
 * the context too). `withBlockContext` instead sets it and restores the one before around every
 * run, three thread-local accesses, which took 10-13% of a message between two actors at
 * throughput 1 against 4-5% now
 * (docs/investigations/2026-12-03-pekko-block-context-and-report-noise.md); it stays the way
 * where that thread-local cannot be reached.
 */
internal class MailboxRun(val mailbox: Runnable) : Runnable, scala.runtime.AbstractFunction0<Unit>() {
    override fun run() = runWith(ScalaContextLocal.threadLocal)

    /** [run] through Scala's thread-local [contextLocal], or with `withBlockContext` when it is null (tests take both paths). */
    fun runWith(contextLocal: ThreadLocal<BlockContext>?) {
        if (contextLocal == null) {
            BlockContext.withBlockContext(PoolBlockContext, this)
            return
        }
        if (contextLocal.get() !== PoolBlockContext) contextLocal.set(PoolBlockContext)
        mailbox.run()
    }

    override fun apply() {
        mailbox.run()
    }

    override fun toString(): String = mailbox.toString()
}

/**
 * The thread-local in which Scala 2.13's `BlockContext` keeps a thread's block context (the
 * private `contextLocal` of `scala.concurrent.BlockContext$`, which `withBlockContext` sets and
 * restores and `BlockContext.current` reads), or null if this Scala library has no such field or
 * denies access to it; [MailboxRun] then sets the context around each run instead.
 */
internal object ScalaContextLocal {
    @JvmField
    val threadLocal: ThreadLocal<BlockContext>? = try {
        val field = Class.forName("scala.concurrent.BlockContext\$").getDeclaredField("contextLocal")
        field.isAccessible = true
        @Suppress("UNCHECKED_CAST")
        field.get(null) as? ThreadLocal<BlockContext>
    } catch (e: Exception) { // ReflectiveOperationException, or InaccessibleObjectException from a module that does not open it
        null
    }
}
