package dev.stealing

import java.util.concurrent.Callable
import java.util.function.BiFunction
import java.util.function.IntConsumer

/**
 * The blocking fork/join, loops and sorts of a [StealingDispatcher]: the forms for Java, and for
 * Kotlin code that is not in a coroutine. Each call returns when all of its work is done; the
 * Kotlin forms in a coroutine ([parallelForEach], [parallelFold], [forkJoin], ...) suspend instead.
 *
 * ```java
 * StealingDispatcher pool = StealingDispatcher.getShared();
 * pool.parallelFor(0, n, i -> out[i] = f(in[i]));
 * ```
 *
 * **Where they run.** Called on a worker of the pool (inside a task, a loop or a fork/join), the
 * work runs on the calling thread and its pieces are offered to the pool's other workers. Called
 * from any other thread, it runs on the pool while the caller waits; the wait is not
 * interruptible (as `ForkJoinTask.invoke`: an interrupt stays set for the caller to see
 * afterwards), and a worker of another pool waits as a blocked worker of its own pool.
 *
 * **No grain size to tune.** Loops split their range on demand (see [parallelForEach]); sorts
 * split into a power of two of pieces, at least one per worker.
 *
 * **Failures.** If user code throws, no new piece starts, running pieces stop within 4,096
 * indices, and once every started piece has ended the first exception is thrown (an unchecked
 * exception as it is), with later ones added to it as suppressed.
 *
 * Implemented by [StealingDispatcher] only.
 */
public sealed interface ParallelOperations {
    /**
     * Runs [left] and [right], in parallel where another worker is free to take one of them, and
     * returns `combine.apply(leftResult, rightResult)`: divide-and-conquer without a `Future` per
     * task, the blocking form of [forkJoin] (after rayon's `join`).
     *
     * ```java
     * static long fib(StealingDispatcher pool, int n) {
     *     if (n < 2) return n;
     *     return pool.forkJoin(() -> fib(pool, n - 1), () -> fib(pool, n - 2), Long::sum);
     * }
     * ```
     *
     * On a worker of this pool, [right] is offered to the other workers and [left] runs at once
     * on the calling thread; then, if no worker took [right] meanwhile, the caller runs it too,
     * as a plain call: the common case costs two calls and a queue entry. If a worker took it,
     * the caller helps with the tasks that [right] forks there, then waits. From any other
     * thread the whole call runs on this pool while the caller waits, as described for
     * [ParallelOperations]. Either half may call `forkJoin` again: a recursion uses the stack
     * like a plain recursive function. [combine] runs on the calling thread.
     *
     * If either half throws, the other half has ended (or never started) when this throws: a
     * [right] not yet started never starts once [left] has failed. The exception is [left]'s if
     * it threw, with [right]'s added as suppressed if both did, else [right]'s; an unchecked
     * exception is thrown as it is, a checked one wrapped in
     * [java.util.concurrent.CompletionException], as [ForkedTask.join] does.
     *
     * @param left the half run at once by the caller.
     * @param right the half offered to other workers.
     * @param combine what to return, from the two results.
     * @throws java.util.concurrent.RejectedExecutionException if this pool is closed (called from
     *   outside it), or `shutdownNow` dropped the call before it started.
     */
    public fun <A, B, R> forkJoin(left: Callable<out A>, right: Callable<out B>, combine: BiFunction<in A, in B, out R>): R

    /**
     * Runs [left] and [right], in parallel where another worker is free to take one of them, and
     * returns when both have ended: [forkJoin] for halves without a result (a merge sort's two
     * halves, for instance).
     *
     * @param left the half run at once by the caller.
     * @param right the half offered to other workers.
     * @throws java.util.concurrent.RejectedExecutionException as the other `forkJoin`.
     */
    public fun forkJoin(left: Runnable, right: Runnable)

    /**
     * Runs `body.accept(i)` for every `i` from [from] (inclusive) to [to] (exclusive), in
     * parallel, and returns when every call has returned: the Java form of [parallelForEach]
     * (`pool.parallelFor(0, n, i -> out[i] = f(in[i]))`). Each index runs exactly once, in an
     * unspecified order. Where it runs and failures: see [ParallelOperations].
     *
     * @param from the first index.
     * @param to the index after the last one; `from == to` runs nothing.
     * @param body what to run for each index.
     * @throws IllegalArgumentException if [from] is greater than [to].
     * @throws java.util.concurrent.RejectedExecutionException if this pool is closed (called from
     *   outside it), or `shutdownNow` dropped the loop before it started.
     */
    public fun parallelFor(from: Int, to: Int, body: IntConsumer)

    /**
     * Sorts [array] in ascending order, in parallel: the Java form of [IntArray.parallelSort] (a
     * merge sort whose pieces and merges run on every worker, with a buffer as long as the
     * array). Waits as [parallelFor] does.
     *
     * @param array the array to sort in place.
     * @throws java.util.concurrent.RejectedExecutionException as [parallelFor].
     */
    public fun parallelSort(array: IntArray)

    /**
     * Sorts [array] in ascending order, in parallel; see [parallelSort].
     *
     * @param array the array to sort in place.
     * @throws java.util.concurrent.RejectedExecutionException as [parallelFor].
     */
    public fun parallelSort(array: LongArray)
}
