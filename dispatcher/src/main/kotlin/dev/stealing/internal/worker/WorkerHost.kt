package dev.stealing.internal.worker

import dev.stealing.internal.idle.Ctl
import dev.stealing.internal.idle.IdleControl
import dev.stealing.internal.idle.IdleHost
import dev.stealing.internal.idle.IdleNode
import dev.stealing.internal.jvm.CpuPinning
import dev.stealing.internal.queue.FairRotation
import dev.stealing.internal.queue.MpmcTaskQueue
import dev.stealing.internal.queue.WorkDeque
import dev.stealing.internal.timer.nanosOrNever
import java.lang.invoke.VarHandle
import java.util.BitSet

/**
 * The pool as its workers see it: the queues every worker shares, the worker table, idle
 * control, the configuration, and the few pool operations a worker calls. The pool
 * (`dev.stealing.internal.pool.WorkStealingPool`) is its one subclass; the worker package
 * depends on nothing above this class. Its parts are final fields and its abstract methods
 * have one implementation, so the JIT calls them directly.
 *
 * It is also what idle control sees of the pool ([IdleHost]): [idleNode] here, the rest in
 * the pool.
 */
internal abstract class WorkerHost(
    val parallelism: Int,
    val name: String,
    val config: PoolConfig,
    /**
     * The context class loader of every thread this pool starts (its workers, extra workers and
     * its monitor), fixed when the pool is created: by default the one of the thread that creates
     * it. A thread started later would otherwise inherit the loader of whichever thread happened
     * to start it (a submitter from a web request, a plugin, a test's throwaway loader), which
     * would then stay reachable from the pool's threads for as long as they live.
     */
    val threadContextClassLoader: ClassLoader?,
) : IdleHost {
    init {
        require(name.isNotBlank()) { "name must not be blank, was \"$name\"" }
        require(parallelism in 1..Ctl.MAX_THREADS) {
            "parallelism must be in 1..${Ctl.MAX_THREADS}, was $parallelism"
        }
        require(config.maxThreads == 0 || config.maxThreads >= parallelism) {
            "maxThreads must be 0 (automatic) or >= parallelism ($parallelism), was ${config.maxThreads}"
        }
    }

    /** [PoolConfig.keepAlive] in nanoseconds; Long.MAX_VALUE (never retire) if longer than ~70 years. */
    val keepAliveNanos: Long = nanosOrNever(config.keepAlive)

    /** Most worker threads alive at once: `parallelism` plus extras for blocked workers. */
    val maxThreads: Int =
        if (config.maxThreads != 0) config.maxThreads else minOf(parallelism + DEFAULT_EXTRA_THREADS, Ctl.MAX_THREADS)

    /** Tasks submitted from outside the pool (and `yield()` from outside), FIFO. */
    val global = MpmcTaskQueue()

    /** The fair queues and their weighted round-robin. */
    val fair = FairRotation()

    /** Every how many tasks a worker takes a periodic look at timers and the shared queues. */
    val globalCheckInterval = config.globalCheckInterval

    /** Started workers by slot. */
    val workers = WorkerTable(parallelism)

    /** Idle and block state of every worker; it sees this pool only as an [IdleHost]. */
    val idle = IdleControl(parallelism, maxThreads, name, this)

    /** With [PoolConfig.pinThreads]: the CPUs the creating thread may use, read once. */
    val pinnableCpus: BitSet? =
        if (!config.pinThreads) null else try { CpuPinning.allowedCpus() } catch (e: Throwable) { BitSet() }

    /** Shutdown was called: new outside work is refused. */
    abstract fun isShutdown(): Boolean

    /** Workers should exit: `shutdownNow`, or the pool is terminating. */
    abstract fun isStopping(): Boolean

    /** After shutdown, a worker going idle may be the last one: the pool may end (quiescence). */
    abstract fun tryQuiesce()

    /** Worker [w]'s thread ends, after leaving idle control; [retiredIdle] if it retired idle. */
    abstract fun workerExited(w: Worker, retiredIdle: Boolean)

    /** Takes in the timers offered to [target]'s heap by other threads; with [tryOnly], never waits for its lock. */
    abstract fun takeOffersOf(target: Worker, tryOnly: Boolean)

    /** A task threw [e]: the pool's exception handler. */
    abstract fun reportFailure(task: Runnable, e: Throwable)

    /**
     * [thief] just stole [task] from a queue: a forked task records its thief, whom its joiner
     * helps (the worker does not know the task types; the pool does).
     */
    abstract fun onStolen(task: Runnable, thief: Worker)

    /** A core worker could not pin its thread ([PoolConfig.pinThreads]); the pool runs unpinned. */
    abstract fun pinningFailed(why: String)

    /** The worker in slot [index]'s node (for idle control). */
    final override fun idleNode(index: Int): IdleNode = workers[index].idleNode

    final override fun forEachIdleNode(action: (IdleNode) -> Unit) = workers.forEach { action(it.idleNode) }

    /**
     * Signals for a task just offered to the global queue or a fair queue. No explicit fence:
     * the offer claimed its slot with a CAS on the queue's enqueue index, a synchronization
     * action, and a sleeper's re-scan reads that index with a volatile read after its CAS on
     * ctl; the JMM totally orders these, so either the sleeper sees the claimed slot (and keeps
     * searching until it is written) or this volatile read of ctl sees the sleeper
     * (docs/parking.md).
     */
    fun signalAfterGlobalOffer() {
        idle.signalWork()
    }

    /**
     * Signals for a task just pushed onto a deque, or re-published after being hidden: every
     * deque publication ends here.
     */
    @Suppress("NOTHING_TO_INLINE")
    inline fun signalAfterPublish() {
        // Dekker fence: the task written above must be visible before ctl is read in
        // signalWork(). Pairs with the fence after the idle push in goIdle().
        VarHandle.fullFence()
        idle.signalWork()
    }

    /**
     * Signals for a fork just pushed onto [deque] (its owner calls this), unless a task older
     * than the fork is still queued there once the fork is visible: then whoever takes that task
     * sees the fork too, and recruits for it as for any work it sees (a searcher's `endSearch`),
     * so the read of ctl is skipped, as `ForkJoinPool` signals only for a push onto an empty
     * queue. The fence stays: without it the check could see a task that a thief had taken, and
     * whose thief had already looked for more, before the fork was visible
     * (docs/parking.md, "Forks onto a non-empty deque"). `execute` and coroutine dispatches
     * always read ctl (a fan-out of `execute` calls ran slower without it).
     */
    @Suppress("NOTHING_TO_INLINE")
    inline fun signalAfterFork(deque: WorkDeque) {
        // Dekker fence: the fork's bottom store must be visible before top is read below (and
        // ctl in signalWork()). Pairs with the steal's CAS on top followed by the thief's reads
        // of bottom (WorkDeque.size() reads top first), and, as in signalAfterPublish(), with
        // the fence after the idle push in goIdle().
        VarHandle.fullFence()
        if (!deque.holdsTaskBelowNewest()) idle.signalWork()
    }

    /** The worker of this pool running the calling code, or null. */
    fun currentWorker(): Worker? {
        val t = Thread.currentThread()
        return if (t is Worker && t.pool === this) t else null
    }

    private companion object {
        /** Default extra threads beyond `parallelism` (as ForkJoinPool's default maximum). */
        const val DEFAULT_EXTRA_THREADS = 256
    }
}
