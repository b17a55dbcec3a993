package dev.stealing.internal.join

import dev.stealing.internal.worker.Worker
import dev.stealing.internal.worker.WorkerHost
import kotlinx.coroutines.async
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.ensureActive
import java.util.concurrent.CancellationException as JavaCancellationException
import kotlin.coroutines.CoroutineContext
import kotlin.coroutines.coroutineContext
import kotlin.coroutines.intrinsics.COROUTINE_SUSPENDED
import kotlin.coroutines.intrinsics.intercepted
import kotlin.coroutines.intrinsics.startCoroutineUninterceptedOrReturn
import kotlin.coroutines.intrinsics.suspendCoroutineUninterceptedOrReturn
import kotlin.coroutines.resume

/**
 * The suspend fork/join of the API's `forkJoin` (docs/inlining.md, "Suspend fork/join"), called
 * with the caller's [context] and [pool], the pool its dispatcher is (null when that dispatcher
 * is not a `StealingDispatcher` itself: a view of one, or any other dispatcher); the API finds
 * it, so the engine need not know the API's dispatcher. On a worker of [pool] the halves are
 * [ForkHalf]s on the worker's deque, run in place unless stolen ([forkJoinOnThisWorker]); anywhere
 * else an `async` through the caller's own dispatcher ([forkJoinElsewhere]).
 */
internal suspend fun <A, B> suspendForkJoin(
    context: CoroutineContext,
    pool: WorkerHost?,
    left: suspend () -> A,
    right: suspend () -> B,
): Pair<A, B> {
    val w = Thread.currentThread() as? Worker
    if (w == null || pool !== w.pool) return forkJoinElsewhere(left, right)
    if (!w.canNest()) return forkJoinOnFreshStack(pool, left, right)
    return forkJoinOnThisWorker(w, context, left, right)
}

/**
 * `forkJoinAll`: [suspendForkJoin] applied to halves of [tasks], recursively, on [pool] (the
 * caller's, as for [suspendForkJoin]; the same for every half, which runs with the caller's
 * dispatcher). The results in the order of [tasks].
 */
internal suspend fun <T> suspendForkJoinAll(pool: WorkerHost?, tasks: List<suspend () -> T>): List<T> {
    val n = tasks.size
    if (n == 0) return emptyList()
    val out = arrayOfNulls<Any?>(n)
    forkJoinRange(pool, tasks, 0, n, out)
    @Suppress("UNCHECKED_CAST")
    return out.asList() as List<T>
}

private suspend fun <T> forkJoinRange(pool: WorkerHost?, tasks: List<suspend () -> T>, lo: Int, hi: Int, out: Array<Any?>) {
    if (hi - lo == 1) {
        out[lo] = tasks[lo]()
        return
    }
    val mid = (lo + hi) ushr 1
    suspendForkJoin(coroutineContext, pool, { forkJoinRange(pool, tasks, lo, mid, out) }, { forkJoinRange(pool, tasks, mid, hi, out) })
}

/** Not on a worker of the caller's pool: an `async` through the caller's own dispatcher. */
private suspend fun <A, B> forkJoinElsewhere(left: suspend () -> A, right: suspend () -> B): Pair<A, B> =
    coroutineScope {
        val b = async { right() }
        Pair(left(), b.await())
    }

/** Nested `maxInlineDepth` deep: re-queue the caller, then fork from a fresh stack. */
private suspend fun <A, B> forkJoinOnFreshStack(pool: WorkerHost, left: suspend () -> A, right: suspend () -> B): Pair<A, B> {
    suspendCoroutineUninterceptedOrReturn<Unit> { cont ->
        cont.intercepted().resume(Unit) // dispatched: runs from a worker's loop, on a fresh stack
        COROUTINE_SUSPENDED
    }
    return suspendForkJoin(coroutineContext, pool, left, right)
}

/**
 * The protocol (docs/inlining.md, "Suspend fork/join"): publish [right] as a [ForkHalf], run
 * [left], then take [right] back (pop it if it is still the newest task of the current
 * worker's deque, else claim it by CAS, leaving a dead entry) and run it here; or, if a worker
 * claimed it first, wait for that worker's coroutine.
 */
private suspend fun <A, B> forkJoinOnThisWorker(
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
