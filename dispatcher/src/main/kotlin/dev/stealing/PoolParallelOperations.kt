package dev.stealing

import dev.stealing.internal.loops.forkJoin
import dev.stealing.internal.loops.parallelCollect
import dev.stealing.internal.loops.parallelFor
import dev.stealing.internal.loops.parallelMap
import dev.stealing.internal.loops.parallelReduceToDouble
import dev.stealing.internal.loops.parallelReduceToLong
import dev.stealing.internal.loops.parallelSort
import dev.stealing.internal.pool.WorkStealingPool
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
@JvmSynthetic
internal fun parallelOperationsOf(pool: WorkStealingPool): ParallelOperations = PoolParallelOperations(pool)

/**
 * [ParallelOperations] on [pool], each one delegated to the engine's form of it on the pool
 * (`internal/loops/PoolOperations.kt`). Private: compiled package-private, so Java users are not
 * offered it.
 */
private class PoolParallelOperations(private val pool: WorkStealingPool) : ParallelOperations {
    override fun <A, B, R> forkJoin(left: Callable<out A>, right: Callable<out B>, combine: BiFunction<in A, in B, out R>): R =
        pool.forkJoin(left, right, combine)

    override fun forkJoin(left: Runnable, right: Runnable): Unit = pool.forkJoin(left, right)

    override fun parallelFor(from: Int, to: Int, body: IntConsumer): Unit = pool.parallelFor(from, to, body)

    override fun parallelSort(array: IntArray): Unit = pool.parallelSort(array)

    override fun parallelSort(array: LongArray): Unit = pool.parallelSort(array)

    override fun parallelReduceToLong(from: Int, to: Int, identity: Long, mapper: IntToLongFunction, op: LongBinaryOperator): Long =
        pool.parallelReduceToLong(from, to, identity, mapper, op)

    override fun parallelReduceToDouble(from: Int, to: Int, identity: Double, mapper: IntToDoubleFunction, op: DoubleBinaryOperator): Double =
        pool.parallelReduceToDouble(from, to, identity, mapper, op)

    override fun <R> parallelCollect(from: Int, to: Int, supplier: Supplier<R>, accumulator: ObjIntConsumer<R>, combiner: BiConsumer<R, R>): R =
        pool.parallelCollect(from, to, supplier, accumulator, combiner)

    override fun <T, R> parallelMap(list: List<T>, mapper: Function<in T, out R>): List<R> = pool.parallelMap(list, mapper)

    override fun <T> parallelSort(array: Array<T>, comparator: Comparator<in T>): Unit = pool.parallelSort(array, comparator)

    override fun parallelSort(array: DoubleArray): Unit = pool.parallelSort(array)
}
