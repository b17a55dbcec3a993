package dev.stealing.internal.loops

import java.util.function.IntToLongFunction
import java.util.function.LongBinaryOperator

/**
 * Java's `parallelReduceToLong`: each piece folds `op(acc, mapper(i))` over its indices in
 * increasing order from [identity], and the pieces' results are combined with [op] in index
 * order. The accumulator is a `long` local inside a block and is boxed once per block (and once
 * per piece for [identity]), never per index: a loop-carried boxed `Long` costs an allocation
 * per index that the JIT does not remove. Java's end is exclusive, so the default
 * [runLastIndex] stays.
 */
internal class LongReduceLoop(
    private val identity: Long,
    private val mapper: IntToLongFunction,
    private val op: LongBinaryOperator,
) : RangeLoop() {
    override fun newAccumulator(): Any? = identity

    override fun runBlock(acc: Any?, from: Int, count: Int): Any? {
        var r = acc as Long
        val end = from + count
        for (i in from until end) r = op.applyAsLong(r, mapper.applyAsLong(i))
        return r
    }

    override fun combine(left: Any?, right: Any?): Any? = op.applyAsLong(left as Long, right as Long)
}
