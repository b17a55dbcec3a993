package dev.stealing

import dev.stealing.internal.join.CallableHalf
import dev.stealing.internal.join.RunnableHalf
import dev.stealing.internal.join.forkJoinOnWorker
import dev.stealing.internal.loops.CollectLoop
import dev.stealing.internal.loops.DoubleMergeSort
import dev.stealing.internal.loops.DoubleReduceLoop
import dev.stealing.internal.loops.IntConsumerLoop
import dev.stealing.internal.loops.IntMergeSort
import dev.stealing.internal.loops.ListMapLoop
import dev.stealing.internal.loops.LongMergeSort
import dev.stealing.internal.loops.LongReduceLoop
import dev.stealing.internal.loops.ObjectMergeSort
import dev.stealing.internal.loops.runBlockingOn
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

/** The [ParallelOperations] of a pool: what [StealingDispatcher] delegates them to. */
internal fun parallelOperationsOf(pool: WorkStealingPool): ParallelOperations = PoolParallelOperations(pool)

/**
 * [ParallelOperations] on [pool]: checks the arguments, then hands the work to the engine's
 * loops and sorts (`internal.loops`), which run it on the calling worker or, from any other
 * thread, as a task of [pool] while the caller waits ([runBlockingOn]). Private: compiled
 * package-private, so Java users are not offered it.
 */
private class PoolParallelOperations(private val pool: WorkStealingPool) : ParallelOperations {
    override fun <A, B, R> forkJoin(left: Callable<out A>, right: Callable<out B>, combine: BiFunction<in A, in B, out R>): R {
        val w = pool.currentWorker() ?: return runBlockingOn(pool) { forkJoin(left, right, combine) }
        return forkJoinOnWorker(w, CallableHalf(right), { left.call() }, { a, b -> combine.apply(a, b) })
    }

    override fun forkJoin(left: Runnable, right: Runnable) {
        val w = pool.currentWorker() ?: return runBlockingOn(pool) { forkJoin(left, right) }
        forkJoinOnWorker(w, RunnableHalf(right), { left.run() }, { _, _ -> })
    }

    override fun parallelFor(from: Int, to: Int, body: IntConsumer) {
        checkRange("parallelFor", from, to)
        if (from == to) return
        runBlockingOn(pool) { IntConsumerLoop(body).runAll(pool, from.toLong(), to.toLong()) }
    }

    override fun parallelSort(array: IntArray) {
        if (array.size < 2) return
        runBlockingOn(pool) { IntMergeSort(array).sortAll(pool) }
    }

    override fun parallelSort(array: LongArray) {
        if (array.size < 2) return
        runBlockingOn(pool) { LongMergeSort(array).sortAll(pool) }
    }

    override fun parallelReduceToLong(from: Int, to: Int, identity: Long, mapper: IntToLongFunction, op: LongBinaryOperator): Long {
        checkRange("parallelReduceToLong", from, to)
        if (from == to) return identity
        return runBlockingOn(pool) { LongReduceLoop(identity, mapper, op).runAll(pool, from.toLong(), to.toLong()) } as Long
    }

    override fun parallelReduceToDouble(from: Int, to: Int, identity: Double, mapper: IntToDoubleFunction, op: DoubleBinaryOperator): Double {
        checkRange("parallelReduceToDouble", from, to)
        if (from == to) return identity
        return runBlockingOn(pool) { DoubleReduceLoop(identity, mapper, op).runAll(pool, from.toLong(), to.toLong()) } as Double
    }

    override fun <R> parallelCollect(from: Int, to: Int, supplier: Supplier<R>, accumulator: ObjIntConsumer<R>, combiner: BiConsumer<R, R>): R {
        checkRange("parallelCollect", from, to)
        if (from == to) return supplier.get()
        @Suppress("UNCHECKED_CAST")
        return runBlockingOn(pool) { CollectLoop(supplier, accumulator, combiner).runAll(pool, from.toLong(), to.toLong()) } as R
    }

    override fun <T, R> parallelMap(list: List<T>, mapper: Function<in T, out R>): List<R> {
        if (list.isEmpty()) return Collections.emptyList()
        val items: List<T> = if (list is RandomAccess) list else ArrayList(list)
        val out = arrayOfNulls<Any?>(items.size)
        runBlockingOn(pool) { ListMapLoop(items, mapper, out).runAll(pool, 0L, out.size.toLong()) }
        @Suppress("UNCHECKED_CAST")
        return Collections.unmodifiableList(out.asList()) as List<R>
    }

    override fun <T> parallelSort(array: Array<T>, comparator: Comparator<in T>) {
        if (array.size < 2) return
        runBlockingOn(pool) { ObjectMergeSort(array, comparator).sortAll(pool) }
    }

    override fun parallelSort(array: DoubleArray) {
        if (array.size < 2) return
        runBlockingOn(pool) { DoubleMergeSort(array).sortAll(pool) }
    }

    private fun checkRange(method: String, from: Int, to: Int) =
        require(from <= to) { "$method: from ($from) must not be greater than to ($to)" }
}
