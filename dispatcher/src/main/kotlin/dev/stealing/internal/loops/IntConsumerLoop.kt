package dev.stealing.internal.loops

import java.util.function.IntConsumer

/** Java's `parallelFor`: [body] for each index; no accumulator. (The Kotlin loops subclass [RangeLoop] inline.) */
internal class IntConsumerLoop(private val body: IntConsumer) : RangeLoop() {
    override fun runBlock(acc: Any?, from: Int, count: Int): Any? {
        for (k in 0 until count) body.accept(from + k)
        return null
    }
}
