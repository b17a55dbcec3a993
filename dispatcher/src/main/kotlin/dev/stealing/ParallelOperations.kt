package dev.stealing

import java.util.concurrent.Callable
import java.util.function.BiConsumer
import java.util.function.BiFunction
import java.util.function.DoubleBinaryOperator
import java.util.function.Function
import java.util.function.IntConsumer
import java.util.function.IntToDoubleFunction
import java.util.function.IntToLongFunction
import java.util.function.LongBinaryOperator
import java.util.function.ObjIntConsumer
import java.util.function.Supplier

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
 * **Reductions and order.** A reduction or collect folds each piece from its own start value
 * (`identity`, or a new container), its indices in increasing order, and combines the pieces'
 * results in index order, as a parallel `IntStream` does: with an associative operation whose
 * start value is its identity, the result is that of the sequential loop.
 *
 * **Arguments.** A null argument throws a `NullPointerException` that names the parameter;
 * `from > to` throws an `IllegalArgumentException` that gives both.
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
     * array). Waits as `parallelFor(from, to, body)` does.
     *
     * @param array the array to sort in place.
     * @throws java.util.concurrent.RejectedExecutionException as [parallelFor].
     */
    public fun parallelSort(array: IntArray)

    /**
     * Sorts [array] in ascending order, in parallel, as the `IntArray` (Java: `int[]`) overload does.
     *
     * @param array the array to sort in place.
     * @throws java.util.concurrent.RejectedExecutionException as [parallelFor].
     */
    public fun parallelSort(array: LongArray)

    /**
     * Returns `identity op mapper(from) op mapper(from + 1) ... op mapper(to - 1)`, computed in
     * parallel: as `IntStream.range(from, to).parallel().mapToLong(mapper).reduce(identity, op)`,
     * with no boxing per index.
     *
     * ```java
     * long sumOfSquares = pool.parallelReduceToLong(0, n, 0L, i -> (long) i * i, Long::sum);
     * ```
     *
     * Each piece of the range folds its indices in increasing order from [identity] and the
     * pieces are combined with [op] in index order (see [ParallelOperations]), so [op] must be
     * associative and [identity] an identity of it; [mapper] runs exactly once per index, on
     * any worker. Where it runs and failures (of [mapper] or [op]): see [ParallelOperations].
     *
     * @param from the first index.
     * @param to the index after the last one; `from == to` returns [identity].
     * @param identity the start value of each piece: an identity of [op] (0 for a sum).
     * @param mapper the value of an index.
     * @param op combines two values; associative.
     * @return the reduction, or [identity] for an empty range.
     * @throws IllegalArgumentException if [from] is greater than [to].
     * @throws java.util.concurrent.RejectedExecutionException as [parallelFor].
     */
    public fun parallelReduceToLong(from: Int, to: Int, identity: Long, mapper: IntToLongFunction, op: LongBinaryOperator): Long

    /**
     * Returns `identity op mapper(from) op ... op mapper(to - 1)`, computed in parallel: the
     * `double` form of [parallelReduceToLong], as
     * `IntStream.range(from, to).parallel().mapToDouble(mapper).reduce(identity, op)`. Pieces are
     * combined in index order; a floating-point sum is not exactly associative, so its last bits
     * may differ from the sequential sum's and from one call to the next (where the range was
     * split depends on which workers were idle).
     *
     * @param from the first index.
     * @param to the index after the last one; `from == to` returns [identity].
     * @param identity the start value of each piece: an identity of [op] (0.0 for a sum).
     * @param mapper the value of an index.
     * @param op combines two values; associative.
     * @return the reduction, or [identity] for an empty range.
     * @throws IllegalArgumentException if [from] is greater than [to].
     * @throws java.util.concurrent.RejectedExecutionException as [parallelFor].
     */
    public fun parallelReduceToDouble(from: Int, to: Int, identity: Double, mapper: IntToDoubleFunction, op: DoubleBinaryOperator): Double

    /**
     * Collects the indices from [from] (inclusive) to [to] (exclusive) into mutable containers, in
     * parallel, as `IntStream.range(from, to).parallel().collect(supplier, accumulator, combiner)`:
     * each piece of the range gets a new container from [supplier] and adds its indices to it in
     * increasing order with [accumulator]; then the pieces' containers are combined in index
     * order, `combiner.accept(left, right)` folding the later (`right`) into the earlier (`left`).
     *
     * ```java
     * int[] histogram = pool.parallelCollect(0, data.length, () -> new int[256],
     *     (h, i) -> h[data[i] & 0xff]++, (h, other) -> { for (int b = 0; b < 256; b++) h[b] += other[b]; });
     * ```
     *
     * A container is used by one thread at a time, so it need not be thread-safe. How many
     * containers there are depends on how the range was split (one for an empty range or a pool
     * of one worker). Where it runs and failures (of any of the three): see [ParallelOperations].
     *
     * @param from the first index.
     * @param to the index after the last one; `from == to` returns a new container, empty.
     * @param supplier a new, empty container.
     * @param accumulator adds an index to a container.
     * @param combiner adds everything of its second container into its first.
     * @return the container of the first piece, holding every index.
     * @throws IllegalArgumentException if [from] is greater than [to].
     * @throws java.util.concurrent.RejectedExecutionException as [parallelFor].
     */
    public fun <R> parallelCollect(from: Int, to: Int, supplier: Supplier<R>, accumulator: ObjIntConsumer<R>, combiner: BiConsumer<R, R>): R

    /**
     * Returns `mapper.apply(e)` for each element `e` of [list], in the list's order, computed in
     * parallel: as `list.parallelStream().map(mapper).toList()`, and the Java form of
     * [List.parallelMap]. [mapper] runs exactly once per element, on any worker; the range of
     * indices splits on demand, so elements of uneven cost share out without a grain size. A
     * list that is not `RandomAccess` is copied first; [list] must not change while this runs.
     * Where it runs and failures: see [ParallelOperations].
     *
     * @param list the elements; may hold nulls if [mapper] takes them.
     * @param mapper the result of one element (null allowed).
     * @return an unmodifiable list of the results, in the order of [list].
     * @throws java.util.concurrent.RejectedExecutionException as [parallelFor].
     */
    public fun <T, R> parallelMap(list: List<T>, mapper: Function<in T, out R>): List<R>

    /**
     * Sorts [array] in the order of [comparator], in parallel: as `Arrays.parallelSort(array,
     * comparator)`, and the Java form of [Array.parallelSortWith]. The sort is **stable**: equal
     * elements keep their order. A merge sort whose pieces (each sorted with `Arrays.sort`, a
     * stable sort) and merges (which take the earlier element on a tie) run on every worker,
     * with a buffer as long as the array. Waits as `parallelFor(from, to, body)` does.
     *
     * If [comparator] throws, no piece or merge starts after it (a piece already being sorted on
     * another worker runs to its end, and the merges only move their runs into place), and then
     * the first exception reaches the caller, later ones suppressed into it; the array holds an
     * unspecified arrangement, as after an `Arrays.sort` that failed.
     *
     * @param array the array to sort in place; may hold nulls if [comparator] takes them.
     * @param comparator the order.
     * @throws java.util.concurrent.RejectedExecutionException as [parallelFor].
     */
    public fun <T> parallelSort(array: Array<T>, comparator: Comparator<in T>)

    /**
     * Sorts [array] in ascending order, in parallel, in the order of `Arrays.sort(double[])`
     * (that of `Double.compare`): -0.0 before 0.0, and every NaN after positive infinity. The
     * Java form of [DoubleArray.parallelSort]; otherwise as the `IntArray` (Java: `int[]`) overload.
     *
     * @param array the array to sort in place.
     * @throws java.util.concurrent.RejectedExecutionException as [parallelFor].
     */
    public fun parallelSort(array: DoubleArray)
}
