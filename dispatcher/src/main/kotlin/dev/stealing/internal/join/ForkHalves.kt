package dev.stealing.internal.join

import dev.stealing.internal.jvm.fieldHandle
import dev.stealing.internal.worker.Worker
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.CompletableJob
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.ExperimentalCoroutinesApi
import kotlinx.coroutines.Job
import kotlinx.coroutines.newCoroutineContext
import java.lang.invoke.VarHandle
import kotlin.coroutines.Continuation
import kotlin.coroutines.CoroutineContext
import kotlin.coroutines.EmptyCoroutineContext
import kotlin.coroutines.coroutineContext
import kotlin.coroutines.intrinsics.COROUTINE_SUSPENDED
import kotlin.coroutines.intrinsics.createCoroutineUnintercepted
import kotlin.coroutines.intrinsics.intercepted
import kotlin.coroutines.intrinsics.suspendCoroutineUninterceptedOrReturn
import kotlin.coroutines.resume

/**
 * The half of a `forkJoin` ([suspendForkJoin]) offered to thieves: a task on the caller's deque
 * that either its caller takes back or a worker claims. [state] decides who runs [block],
 * exactly once:
 * - null: queued, nobody has claimed it;
 * - [TAKEN]: the caller claimed it by CAS (it could not pop it: its `left` resumed on another
 *   worker, or tasks were pushed above it); the entry left in the deque is dead;
 * - a [StolenHalf]: a worker took it from a deque and claimed it by CAS; it runs there as a
 *   coroutine.
 * A caller that pops it from its deque owns it without a CAS: the deque hands each pushed task
 * to exactly one taker, and nothing else claims it.
 */
internal class ForkHalf<B>(
    @JvmField val block: suspend () -> B,
    @JvmField val context: CoroutineContext,
) : CallerOwnedHalf {
    @Volatile @JvmField var state: Any? = null

    /** The caller: claims the half it could not pop. False if a worker claimed it first. */
    fun claimBack(): Boolean = STATE.compareAndSet(this, null, TAKEN)

    /** A worker took this from a deque: claim it and start [block] as a coroutine, or skip a dead entry. */
    override fun run() {
        val stolen = claimStolen() ?: return // taken back by its caller: a dead entry
        (Thread.currentThread() as? Worker)?.counters?.countForkStolen()
        stolen.start()
    }

    /** A worker that took this from a deque claims it: the [StolenHalf] to start, or null if the caller claimed it. */
    fun claimStolen(): StolenHalf<B>? {
        if (state != null) return null
        val stolen = StolenHalf(this)
        return if (STATE.compareAndSet(this, null, stolen)) stolen else null
    }

    override fun toString(): String = "ForkHalf@${Integer.toHexString(hashCode())}[" +
        when (val s = state) { null -> "queued"; TAKEN -> "taken back"; else -> s.toString() } + "]"

    internal companion object {
        @JvmField val TAKEN = Any()
        val STATE: VarHandle = fieldHandle(ForkHalf::class.java, "state", Any::class.java)
    }
}

/**
 * A [ForkHalf] claimed by a worker: the completion of the coroutine that runs its block there,
 * with the caller's context and a job that cancelling the caller cancels, and the meeting point
 * with the caller, which suspends in [awaitDone].
 *
 * **Jobs stay one level deep.** A recursion whose halves are stolen at every level nests them
 * thousands deep, and kotlinx cancels a job's children recursively on the stack (about 850
 * nested jobs overflowed it, leaving the rest never cancelled). So a half's job is a kotlinx
 * child of its *anchor* — the caller's job, unless the caller runs directly in another stolen
 * half's coroutine, whose anchor it then shares — and a half started from such a caller is
 * registered with that enclosing half instead ([adopt]). Cancelling the anchor cancels every half
 * below it as a flat list of children; cancelling one half because its sibling failed
 * ([cancelBecause]) walks its registered descendants with a list, not the stack
 * ([cancelSubtree]). A half's job cancelled any other way (its own code cancels its scope, a
 * coroutine launched inside it fails under a supervisor anchor) reaches its registered
 * descendants through a [watch]: a kotlinx child of the half's job with no children of its own,
 * whose completion handler runs [cancelSubtree]. A failure of a coroutine that user code
 * launched inside a half still goes up through kotlinx's parent links, from the half's job to
 * the anchor, as before. A nested `forkJoin` finds its enclosing half by its caller's job
 * ([byJob]), not by a context element: an element would lengthen every context lookup of every
 * `forkJoin` inside a stolen half, the hot path (measured: fib(27) about 20% slower on Temurin 25).
 */
internal class StolenHalf<B>(private val half: ForkHalf<B>) : Continuation<B> {
    /** Set by [start] before the coroutine is created; read by it and its resumptions. */
    override var context: CoroutineContext = EmptyCoroutineContext
        private set

    /** The child job, created by [start] before the coroutine starts; completed in [resumeWith]. */
    private var childJob: CompletableJob? = null

    /** The kotlinx parent of [childJob] (see the class comment); written by [start] before the coroutine starts. */
    private var anchor: Job? = null

    /** The stolen half whose coroutine started this one (registered with it), or null; written by [start]. */
    private var enclosing: StolenHalf<*>? = null

    /** Halves started directly by this half's coroutine and not yet done; guarded by `this`. */
    private var nested: HashSet<StolenHalf<*>>? = null

    /** A child of [childJob] whose cancellation cancels this half's subtree; completed in [resumeWith]. */
    private var watch: CompletableJob? = null

    /** Set under `this` when this half's subtree is cancelled: a half that registers later is cancelled at once. */
    private var subtreeCancelled: CancellationException? = null

    /** null until [start] installs [childJob], or [CANCELLED] if the caller cancelled first; by CAS. */
    @Volatile private var job: Any? = null

    /** null until done; then [DONE]. Or the caller's intercepted continuation while it waits. */
    @Volatile private var waiter: Any? = null

    /** The outcome; written before [waiter] becomes [DONE], read after. */
    private var outcome: Result<B>? = null

    /** The first failure of either half (CAS from null), to decide which one forkJoin throws. */
    @Volatile private var first: Throwable? = null

    @OptIn(ExperimentalCoroutinesApi::class)
    fun start() {
        val parentContext = half.context
        val callerJob = parentContext[Job]
        // The caller runs directly in a stolen half's coroutine (not in one launched inside it).
        val outer = if (callerJob == null) null else byJob[callerJob]
        val parent = if (outer != null) outer.anchor else callerJob
        anchor = parent
        enclosing = outer
        val job = Job(parent)
        childJob = job
        byJob[job] = this // removed in resumeWith()
        // Cancelled with the job, whoever cancels it; it has no children, so the handler runs
        // at once and nothing recurses (a half already marked does nothing: markSubtreeCancelled).
        watch = Job(job).also { w ->
            w.invokeOnCompletion { cause ->
                if (cause != null) cancelSubtree(cause as? CancellationException ?: CancellationException("forkJoin: cancelled", cause))
            }
        }
        if (!JOB.compareAndSet(this, null, job)) {
            job.cancel() // the caller's left already failed
        } else if (outer != null) {
            outer.adopt(this)?.let { job.cancel(it) } // the enclosing half's subtree was cancelled
        }
        // The caller's context for a child, as `launch` builds it (copyable elements copied).
        context = CallerScope(parentContext).newCoroutineContext(job)
        if (!job.isActive) {
            resumeWith(Result.failure(CancellationException("forkJoin: cancelled before it started")))
            return
        }
        // Dispatched to the pool: kotlinx installs the context's thread elements around each step.
        half.block.createCoroutineUnintercepted(this).intercepted().resume(Unit)
    }

    override fun resumeWith(result: Result<B>) {
        outcome = result
        result.exceptionOrNull()?.let { FIRST.compareAndSet(this, null, it) }
        enclosing?.release(this)
        byJob.remove(childJob!!)
        watch!!.complete() // before its parent: a job completes only once its children have
        childJob!!.complete() // ends before the caller goes on: the caller waits for it in awaitDone()
        val w = WAITER.getAndSet(this, DONE)
        if (w != null) {
            @Suppress("UNCHECKED_CAST")
            (w as Continuation<Unit>).resume(Unit)
        }
    }

    /** Registers [child], started by this half's coroutine; the cause to cancel it with if this subtree is already cancelled. */
    private fun adopt(child: StolenHalf<*>): CancellationException? = synchronized(this) {
        subtreeCancelled ?: run {
            (nested ?: HashSet<StolenHalf<*>>(4).also { nested = it }) += child
            null
        }
    }

    /** [child] is done: it no longer needs cancelling with this half. */
    private fun release(child: StolenHalf<*>) {
        synchronized(this) { nested?.remove(child) }
    }

    /** Marks this subtree cancelled and returns the halves registered so far (a later one cancels itself in [adopt]). */
    private fun markSubtreeCancelled(cause: CancellationException): List<StolenHalf<*>> = synchronized(this) {
        if (subtreeCancelled != null) return emptyList()
        subtreeCancelled = cause
        nested?.toList() ?: emptyList()
    }

    /** The caller's left failed with [cause]: record it and cancel this half (before or after it started) and all below it. */
    fun cancelBecause(cause: Throwable) {
        FIRST.compareAndSet(this, null, cause)
        if (JOB.compareAndSet(this, null, CANCELLED)) return // start() will see it
        cancelSubtree(CancellationException("the other half of forkJoin failed", cause))
    }

    /**
     * Cancels this half's job and those of every half registered below it, with a list of halves
     * still to visit instead of a recursion: the subtree may be thousands deep. Each job has no
     * kotlinx children of ours, so cancelling one does not recurse either.
     */
    private fun cancelSubtree(cause: CancellationException) {
        val pending = ArrayList<StolenHalf<*>>()
        pending += this
        while (pending.isNotEmpty()) {
            val h = pending.removeAt(pending.size - 1)
            pending += h.markSubtreeCancelled(cause)
            (h.job as? Job)?.cancel(cause)
        }
    }

    /** The caller: suspends (not cancellably: the half is cancelled through its job) until done. */
    suspend fun awaitDone(): Unit = suspendCoroutineUninterceptedOrReturn { cont ->
        if (waiter === DONE) return@suspendCoroutineUninterceptedOrReturn Unit
        if (WAITER.compareAndSet(this, null, cont.intercepted())) COROUTINE_SUSPENDED else Unit
    }

    fun failure(): Throwable? = outcome!!.exceptionOrNull()

    @Suppress("UNCHECKED_CAST")
    fun value(): B = outcome!!.getOrThrow()

    fun firstFailure(): Throwable? = first

    override fun toString(): String = if (waiter === DONE) "stolen, done" else "stolen, running"

    private class CallerScope(override val coroutineContext: CoroutineContext) : CoroutineScope

    private companion object {
        /**
         * Running stolen halves by their job (identity: kotlinx's jobs do not override
         * equals), so that a half started from a caller whose job is one of them finds it.
         * Written once per steal and once per stolen half's end; steals are rare.
         */
        private val byJob = java.util.concurrent.ConcurrentHashMap<Job, StolenHalf<*>>()

        private val DONE = Any()
        private val CANCELLED = Any()
        private val JOB: VarHandle = fieldHandle(StolenHalf::class.java, "job", Any::class.java)
        private val WAITER: VarHandle = fieldHandle(StolenHalf::class.java, "waiter", Any::class.java)
        private val FIRST: VarHandle = fieldHandle(StolenHalf::class.java, "first", Throwable::class.java)
    }
}
