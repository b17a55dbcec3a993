package dev.stealing

import dev.stealing.internal.join.ForkHalf
import dev.stealing.internal.join.StolenHalf
import dev.stealing.internal.pool.WorkStealingPool
import dev.stealing.internal.worker.Worker
import kotlinx.coroutines.async
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.ensureActive
import java.util.concurrent.CancellationException as JavaCancellationException
import kotlin.coroutines.ContinuationInterceptor
import kotlin.coroutines.CoroutineContext
import kotlin.coroutines.coroutineContext
import kotlin.coroutines.intrinsics.COROUTINE_SUSPENDED
import kotlin.coroutines.intrinsics.intercepted
import kotlin.coroutines.intrinsics.startCoroutineUninterceptedOrReturn
import kotlin.coroutines.intrinsics.suspendCoroutineUninterceptedOrReturn
import kotlin.coroutines.resume

/**
 * Runs [left] and [right], in parallel where a worker is free to take one of them, and returns
 * both results: divide-and-conquer for coroutines, at the cost of a function call where
 * `async`/`await` costs a coroutine.
 *
 * ```kotlin
 * suspend fun fib(n: Int): Long = if (n < 2) n.toLong() else {
 *     val (a, b) = forkJoin({ fib(n - 1) }, { fib(n - 2) })
 *     a + b
 * }
 * withContext(StealingDispatcher) { fib(30) }
 * ```
 *
 * **On a [StealingDispatcher] worker** (the caller's dispatcher is a `StealingDispatcher`, or
 * `StealingDispatcher` itself for the shared pool): [right] is offered to the other workers,
 * then [left] runs at once, as a plain suspend call in the caller's coroutine. If no worker has
 * taken [right] by then, the caller runs it too, the same way: no coroutine, no `Job`, nothing
 * to wait for. Only if another worker took it does [right] run as a coroutine of its own there,
 * with the caller's context (its `CoroutineName`, `ThreadContextElement`s, ...) and a `Job` that
 * cancelling the caller cancels; the caller then suspends until it ends. The counters are in
 * [StealingStats.forks], [StealingStats.forksInlined] and [StealingStats.forksStolen].
 *
 * **Anywhere else** (another dispatcher, `runBlocking`, a `limitedParallelism` view, an
 * [affinity][StealingDispatcher.affinity] dispatcher or a [fair queue][StealingDispatcher.fairQueue]
 * of this library): it is `coroutineScope { val b = async { right() }; Pair(left(), b.await()) }`,
 * so [right] goes through the caller's own dispatcher and a parallelism limit or a key's
 * confinement holds (on `limitedParallelism(1)` the halves never run at the same time).
 *
 * Both halves have ended when `forkJoin` returns or throws. If one throws, `forkJoin` throws
 * that exception once both ended (the first to fail wins, a later failure of the other half is
 * added to it as suppressed, unless it is a `CancellationException`), and the other half:
 * - is not started if nobody started it yet;
 * - is cancelled if it is [right] running as a coroutine of its own (it stops at its next
 *   suspension point or `isActive` check);
 * - on the pool, if it is [left], runs to its end: it is the caller's own code, and cancelling
 *   it would cancel the caller's coroutine (as a panic in `rayon::join`, the failure is reported
 *   when both are done). Off the pool `coroutineScope` cancels it.
 *
 * Cancelling the caller cancels both halves; a half that had not started yet never starts.
 * Either half may suspend (`delay`, `withContext`, ...) and may resume on another worker.
 *
 * **Recursion depth.** The halves run nested in the caller's stack frame, as any suspend call
 * does, so a recursion `forkJoin` inside `forkJoin` uses the stack like a plain recursive
 * function. On a worker, past [StealingOptions.maxInlineDepth] nested halves (256 by default),
 * the caller suspends and resumes at once on a fresh stack (it re-queues itself on its worker),
 * so recursion as deep as the heap allows completes. Off the pool, the depth is bounded by the
 * thread's stack, as it is for `coroutineScope`.
 *
 * @return the results of [left] and [right], in that order.
 */
public suspend fun <A, B> forkJoin(left: suspend () -> A, right: suspend () -> B): Pair<A, B> {
    val context = coroutineContext
    val w = Thread.currentThread() as? Worker
    if (w == null || poolOf(context) !== w.pool) return forkJoinElsewhere(left, right)
    if (!w.canNest()) return forkJoinOnFreshStack(left, right)
    return forkJoinOnWorker(w, context, left, right)
}

/**
 * Runs every one of [tasks], in parallel where workers are free, and returns their results in
 * the order of [tasks]. It is [forkJoin] applied to halves of the list, recursively: each
 * split offers its second half to other workers, so idle workers take large pieces first. The
 * same rules hold: on a [StealingDispatcher] worker no coroutine is created for a task that
 * nobody took; elsewhere the tasks go through the caller's dispatcher; every task has ended
 * when this returns or throws; a failure is thrown after the others ended, and tasks not
 * started by then never start. [tasks] must not change while this runs.
 */
public suspend fun <T> forkJoinAll(tasks: List<suspend () -> T>): List<T> {
    val n = tasks.size
    if (n == 0) return emptyList()
    val out = arrayOfNulls<Any?>(n)
    forkJoinRange(tasks, 0, n, out)
    @Suppress("UNCHECKED_CAST")
    return out.asList() as List<T>
}

private suspend fun <T> forkJoinRange(tasks: List<suspend () -> T>, lo: Int, hi: Int, out: Array<Any?>) {
    if (hi - lo == 1) {
        out[lo] = tasks[lo]()
        return
    }
    val mid = (lo + hi) ushr 1
    forkJoin({ forkJoinRange(tasks, lo, mid, out) }, { forkJoinRange(tasks, mid, hi, out) })
}

/** The pool that the dispatcher of [context] runs on, if it is a [StealingDispatcher] itself (not a view). */
private fun poolOf(context: CoroutineContext): WorkStealingPool? = when (val i = context[ContinuationInterceptor]) {
    is StealingDispatcher -> i.pool
    StealingDispatcher -> StealingDispatcher.shared.pool
    else -> null
}

/** Not on a worker of the caller's pool: an `async` through the caller's own dispatcher. */
private suspend fun <A, B> forkJoinElsewhere(left: suspend () -> A, right: suspend () -> B): Pair<A, B> =
    coroutineScope {
        val b = async { right() }
        Pair(left(), b.await())
    }

/** Nested [StealingOptions.maxInlineDepth] deep: re-queue the caller, then fork from a fresh stack. */
private suspend fun <A, B> forkJoinOnFreshStack(left: suspend () -> A, right: suspend () -> B): Pair<A, B> {
    suspendCoroutineUninterceptedOrReturn<Unit> { cont ->
        cont.intercepted().resume(Unit) // dispatched: runs from a worker's loop, on a fresh stack
        COROUTINE_SUSPENDED
    }
    return forkJoin(left, right)
}

/**
 * The protocol (docs/inlining.md, "Suspend fork/join"): publish [right] as a [ForkHalf], run
 * [left], then take [right] back (pop it if it is still the newest task of the current
 * worker's deque, else claim it by CAS, leaving a dead entry) and run it here; or, if a worker
 * claimed it first, wait for that worker's coroutine.
 */
private suspend fun <A, B> forkJoinOnWorker(
    w: Worker,
    context: CoroutineContext,
    left: suspend () -> A,
    right: suspend () -> B,
): Pair<A, B> {
    val half = ForkHalf(right, context)
    if (!w.pushFork(half)) { // the pool is stopping: both here, one after the other
        val a = callNested(left)
        return Pair(a, callNested(right))
    }
    w.counters.countFork()
    var a: A? = null
    var leftFailure: Throwable? = null
    try {
        a = callNested(left)
    } catch (e: Throwable) {
        leftFailure = e
    }
    // left may have resumed on another worker (or, if the pool stopped, off the pool).
    val now = Thread.currentThread() as? Worker
    if ((now != null && now.deque.popIfNewest(half)) || half.claimBack()) {
        if (now != null) now.counters.countForkInlined()
        if (leftFailure != null) throw leftFailure // right never starts
        context.ensureActive() // a cancelled caller does not start right either
        @Suppress("UNCHECKED_CAST")
        return Pair(a as A, callNested(right))
    }
    @Suppress("UNCHECKED_CAST")
    return joinStolen(half.state as StolenHalf<B>, a, leftFailure)
}

/** [right] runs as a coroutine on the worker that claimed it: cancel it if [left] failed, wait, combine. */
private suspend fun <A, B> joinStolen(stolen: StolenHalf<B>, a: A?, leftFailure: Throwable?): Pair<A, B> {
    if (leftFailure != null) stolen.cancelBecause(leftFailure)
    stolen.awaitDone()
    val rightFailure = stolen.failure()
    if (leftFailure == null && rightFailure == null) {
        @Suppress("UNCHECKED_CAST")
        return Pair(a as A, stolen.value())
    }
    val first = stolen.firstFailure() ?: (leftFailure ?: rightFailure)!!
    val other = if (first === leftFailure) rightFailure else leftFailure
    if (other != null && other !== first && other !is JavaCancellationException) first.addSuppressed(other)
    throw first
}

/**
 * Calls [block] as a plain suspend call of the caller (the caller's continuation is its
 * completion), counting it in the worker's nesting depth while it runs on this thread: the
 * count is taken back when the call returns or suspends, so it measures this thread's stack.
 */
private suspend fun <T> callNested(block: suspend () -> T): T = suspendCoroutineUninterceptedOrReturn { cont ->
    val w = Thread.currentThread() as? Worker
    if (w == null) {
        block.startCoroutineUninterceptedOrReturn(cont)
    } else {
        w.nested { block.startCoroutineUninterceptedOrReturn(cont) }
    }
}
