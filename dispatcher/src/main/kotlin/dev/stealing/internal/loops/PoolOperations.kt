package dev.stealing.internal.loops

import dev.stealing.internal.join.CallableHalf
import dev.stealing.internal.join.RunnableHalf
import dev.stealing.internal.join.forkJoinOnWorker
import dev.stealing.internal.pool.WorkStealingPool
import java.util.Collections
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

// The Java-facing parallel operations of one pool (the API's `ParallelOperations`, which
// `StealingDispatcher` implements by delegating here): each checks its arguments, then runs the
// engine's loop or sort on the calling worker or, from any other thread, as a task of the pool
// while the caller waits ([runBlockingOn]); the fork/joins run [forkJoinOnWorker] on a worker.

internal fun <A, B, R> WorkStealingPool.forkJoin(left: Callable<out A>, right: Callable<out B>, combine: BiFunction<in A, in B, out R>): R {
    val w = currentWorker() ?: return runBlockingOn(this) { forkJoin(left, right, combine) }
    return forkJoinOnWorker(w, CallableHalf(right), { left.call() }, { a, b -> combine.apply(a, b) })
}

internal fun WorkStealingPool.forkJoin(left: Runnable, right: Runnable) {
    val w = currentWorker() ?: return runBlockingOn(this) { forkJoin(left, right) }
    forkJoinOnWorker(w, RunnableHalf(right), { left.run() }, { _, _ -> })
}

internal fun WorkStealingPool.parallelFor(from: Int, to: Int, body: IntConsumer) {
    checkRange("parallelFor", from, to)
    if (from == to) return
    runBlockingOn(this) { IntConsumerLoop(body).runAll(this, from.toLong(), to.toLong()) }
}

internal fun WorkStealingPool.parallelSort(array: IntArray) {
    if (array.size < 2) return
    runBlockingOn(this) { IntMergeSort(array).sortAll(this) }
}

internal fun WorkStealingPool.parallelSort(array: LongArray) {
    if (array.size < 2) return
    runBlockingOn(this) { LongMergeSort(array).sortAll(this) }
}

internal fun WorkStealingPool.parallelReduceToLong(from: Int, to: Int, identity: Long, mapper: IntToLongFunction, op: LongBinaryOperator): Long {
    checkRange("parallelReduceToLong", from, to)
    if (from == to) return identity
    return runBlockingOn(this) { LongReduceLoop(identity, mapper, op).runAll(this, from.toLong(), to.toLong()) } as Long
}

internal fun WorkStealingPool.parallelReduceToDouble(from: Int, to: Int, identity: Double, mapper: IntToDoubleFunction, op: DoubleBinaryOperator): Double {
    checkRange("parallelReduceToDouble", from, to)
    if (from == to) return identity
    return runBlockingOn(this) { DoubleReduceLoop(identity, mapper, op).runAll(this, from.toLong(), to.toLong()) } as Double
}

internal fun <R> WorkStealingPool.parallelCollect(from: Int, to: Int, supplier: Supplier<R>, accumulator: ObjIntConsumer<R>, combiner: BiConsumer<R, R>): R {
    checkRange("parallelCollect", from, to)
    if (from == to) return supplier.get()
    @Suppress("UNCHECKED_CAST")
    return runBlockingOn(this) { CollectLoop(supplier, accumulator, combiner).runAll(this, from.toLong(), to.toLong()) } as R
}

internal fun <T, R> WorkStealingPool.parallelMap(list: List<T>, mapper: Function<in T, out R>): List<R> {
    if (list.isEmpty()) return Collections.emptyList()
    val items: List<T> = if (list is RandomAccess) list else ArrayList(list)
    val out = arrayOfNulls<Any?>(items.size)
    runBlockingOn(this) { ListMapLoop(items, mapper, out).runAll(this, 0L, out.size.toLong()) }
    @Suppress("UNCHECKED_CAST")
    return Collections.unmodifiableList(out.asList()) as List<R>
}

internal fun <T> WorkStealingPool.parallelSort(array: Array<T>, comparator: Comparator<in T>) {
    if (array.size < 2) return
    runBlockingOn(this) { ObjectMergeSort(array, comparator).sortAll(this) }
}

internal fun WorkStealingPool.parallelSort(array: DoubleArray) {
    if (array.size < 2) return
    runBlockingOn(this) { DoubleMergeSort(array).sortAll(this) }
}

private fun checkRange(method: String, from: Int, to: Int) =
    require(from <= to) { "$method: from ($from) must not be greater than to ($to)" }
