package dev.stealing.internal.loops

import java.util.function.Function

/**
 * Java's `parallelMap`: `out[i] = mapper(items[i])` for each index of [items] (a `RandomAccess`
 * list), so the results are in the list's order whichever worker computed them. No
 * accumulator. A worker's writes to [out] reach the caller through the joins of [RangeLoop]:
 * a piece's writes come before the completion of its task, which its joiner reads, and the
 * root's before the caller's wait ends.
 */
internal class ListMapLoop<T, R>(
    private val items: List<T>,
    private val mapper: Function<in T, out R>,
    private val out: Array<Any?>,
) : RangeLoop() {
    override fun runBlock(acc: Any?, from: Int, count: Int): Any? {
        val end = from + count
        for (i in from until end) out[i] = mapper.apply(items[i])
        return null
    }
}
