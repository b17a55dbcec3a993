package dev.stealing

import dev.stealing.internal.join.suspendForkJoin
import dev.stealing.internal.join.suspendForkJoinAll
import kotlin.coroutines.coroutineContext

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
    return suspendForkJoin(context, poolOf(context), left, right)
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
public suspend fun <T> forkJoinAll(tasks: List<suspend () -> T>): List<T> =
    suspendForkJoinAll(poolOf(coroutineContext), tasks)
