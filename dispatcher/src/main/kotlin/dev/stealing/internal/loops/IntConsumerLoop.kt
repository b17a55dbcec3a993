package dev.stealing.internal.loops

import java.util.function.IntConsumer

/**
 * Java's `parallelFor`: [body] for each index; no accumulator. (The Kotlin loops subclass
 * [RangeLoop] inline.) Its end is exclusive, so it never reaches Int.MAX_VALUE and keeps the
 * default [runLastIndex].
 */
internal class IntConsumerLoop(private val body: IntConsumer) : RangeLoop() {
    override fun runBlock(acc: Any?, from: Int, count: Int): Any? {
        val end = from + count
        for (i in from until end) body.accept(i)
        return null
    }
}
