package dev.stealing.internal.loops

import java.util.function.DoubleBinaryOperator
import java.util.function.IntToDoubleFunction

/**
 * Java's `parallelReduceToDouble`: [LongReduceLoop] with a `double` accumulator (a local inside
 * a block, boxed once per block). Pieces are combined in index order, so the result is that of
 * the sequential fold whenever [op] is associative; a floating-point sum is not exactly
 * associative, so its last bits depend on where the range was split.
 */
internal class DoubleReduceLoop(
    private val identity: Double,
    private val mapper: IntToDoubleFunction,
    private val op: DoubleBinaryOperator,
) : RangeLoop() {
    override fun newAccumulator(): Any? = identity

    override fun runBlock(acc: Any?, from: Int, count: Int): Any? {
        var r = acc as Double
        val end = from + count
        for (i in from until end) r = op.applyAsDouble(r, mapper.applyAsDouble(i))
        return r
    }

    override fun combine(left: Any?, right: Any?): Any? = op.applyAsDouble(left as Double, right as Double)
}
