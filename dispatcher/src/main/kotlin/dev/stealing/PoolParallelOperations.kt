package dev.stealing

import dev.stealing.internal.join.CallableHalf
import dev.stealing.internal.join.RunnableHalf
import dev.stealing.internal.join.forkJoinOnWorker
import dev.stealing.internal.loops.IntConsumerLoop
import dev.stealing.internal.loops.IntMergeSort
import dev.stealing.internal.loops.LongMergeSort
import dev.stealing.internal.loops.runBlockingOn
import dev.stealing.internal.pool.WorkStealingPool
import java.util.concurrent.Callable
import java.util.function.BiFunction
import java.util.function.IntConsumer

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
        require(from <= to) { "parallelFor: from ($from) must not be greater than to ($to)" }
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
}
