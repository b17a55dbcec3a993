package dev.stealing.internal.loops

import java.util.function.BiConsumer
import java.util.function.ObjIntConsumer
import java.util.function.Supplier

/**
 * Java's `parallelCollect`, as `IntStream.collect`: each piece gets its own container from
 * [supplier] and [accumulator] adds its indices to it in increasing order; the pieces'
 * containers are then folded in index order, [combiner] adding the later one into the earlier
 * one (its first argument), which is the result.
 */
internal class CollectLoop<R>(
    private val supplier: Supplier<R>,
    private val accumulator: ObjIntConsumer<R>,
    private val combiner: BiConsumer<R, R>,
) : RangeLoop() {
    override fun newAccumulator(): Any? = supplier.get()

    @Suppress("UNCHECKED_CAST")
    override fun runBlock(acc: Any?, from: Int, count: Int): Any? {
        val container = acc as R
        val end = from + count
        for (i in from until end) accumulator.accept(container, i)
        return container
    }

    @Suppress("UNCHECKED_CAST")
    override fun combine(left: Any?, right: Any?): Any? {
        combiner.accept(left as R, right as R)
        return left
    }
}
