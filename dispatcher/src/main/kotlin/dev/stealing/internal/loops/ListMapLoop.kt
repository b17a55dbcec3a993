package dev.stealing.internal.loops

import java.util.function.Function

/**
 * Java's `parallelMap`: `out[i] = mapper(items[i])` for each index of [items] (a `RandomAccess`
 * list), so the results are in the list's order whichever worker computed them. No
 * accumulator; the workers' writes to [out] are seen by the caller through the joins of the
 * pieces (each [ForkedTask][RangeLoop]'s completion orders the writes before its join returns).
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
