package dev.stealing.internal.worker

import dev.stealing.StealingOptions
import dev.stealing.internal.idle.BlockState
import dev.stealing.internal.idle.Ctl
import dev.stealing.internal.idle.IdleControl
import dev.stealing.internal.idle.IdleHost
import dev.stealing.internal.idle.IdleNode
import dev.stealing.internal.jvm.CpuPinning
import dev.stealing.internal.queue.FairRotation
import dev.stealing.internal.queue.MpmcTaskQueue
import dev.stealing.internal.timer.nanosOrNever
import java.lang.invoke.VarHandle
import java.util.BitSet

/**
 * The pool as its workers see it: the queues every worker shares, the worker table, idle
 * control, the options, and the few pool operations a worker calls. The pool
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
    val options: StealingOptions,
) : IdleHost {
    init {
        require(name.isNotBlank()) { "name must not be blank, was \"$name\"" }
        require(parallelism in 1..Ctl.MAX_THREADS) {
            "parallelism must be in 1..${Ctl.MAX_THREADS}, was $parallelism"
        }
        require(options.maxThreads == 0 || options.maxThreads >= parallelism) {
            "maxThreads must be 0 (automatic) or >= parallelism ($parallelism), was ${options.maxThreads}"
        }
    }

    /** [StealingOptions.keepAlive] in nanoseconds; Long.MAX_VALUE (never retire) if longer than ~70 years. */
    val keepAliveNanos: Long = nanosOrNever(options.keepAlive)

    /** Most worker threads alive at once: `parallelism` plus extras for blocked workers. */
    val maxThreads: Int =
        if (options.maxThreads != 0) options.maxThreads else minOf(parallelism + DEFAULT_EXTRA_THREADS, Ctl.MAX_THREADS)

    /** Tasks submitted from outside the pool (and `yield()` from outside), FIFO. */
    val global = MpmcTaskQueue()

    /** The fair queues and their weighted round-robin. */
    val fair = FairRotation()

    /** Every how many tasks a worker takes a periodic look at timers and the shared queues. */
    val globalCheckInterval = options.globalCheckInterval

    /** Started workers by slot. */
    val workers = WorkerTable(parallelism)

    /** Idle and block state of every worker; it sees this pool only as an [IdleHost]. */
    val idle = IdleControl(parallelism, maxThreads, name, this)

    /** With [StealingOptions.pinThreads]: the CPUs the creating thread may use, read once. */
    val pinnableCpus: BitSet? =
        if (!options.pinThreads) null else try { CpuPinning.allowedCpus() } catch (e: Throwable) { BitSet() }

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

    /** A core worker could not pin its thread ([StealingOptions.pinThreads]); the pool runs unpinned. */
    abstract fun pinningFailed(why: String)

    /** The worker in slot [index]'s node (for idle control). */
    final override fun idleNode(index: Int): IdleNode = workers[index].idleNode

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
     * Signals for a fork just pushed onto the deque of the worker with [node], unless the deque
     * already held a task ([dequeWasEmpty] false, from [dev.stealing.internal.queue.WorkDeque.push])
     * and the worker is counted as active: then the push that made the deque non-empty
     * signalled, and a worker it woke recruits the next when it finds work, as `ForkJoinPool`
     * signals only for a push onto an empty queue; and the forking worker re-scans its own deque
     * when it deactivates. A worker inside a blocking region or presumed blocked is not counted
     * and will not deactivate again, so its forks always signal (docs/parking.md, "Forks onto a
     * non-empty deque"). `execute` and coroutine dispatches always signal (a fan-out of
     * `execute` calls ran slower without it).
     */
    @Suppress("NOTHING_TO_INLINE")
    inline fun signalAfterFork(node: IdleNode, dequeWasEmpty: Boolean) {
        // Volatile read; pairs with the monitor's CAS to PRESUMED (presumeBlocked) and this
        // worker's own writes in IdleBlocking. No fence orders the push before it, so a
        // presumption racing this fork may miss it; the monitor's backstop (a look that sees
        // work while no worker is active signals) covers that (docs/parking.md).
        if (dequeWasEmpty || node.blockState != BlockState.NOT_BLOCKED) signalAfterPublish()
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
