package dev.stealing.internal.loops

/*
 * The loops of the inline Kotlin functions (`parallelForEach`, `parallelMap`, `parallelFold`):
 * each is a [RangeLoop] subclass made at the caller's call site, so the user's lambda is compiled
 * into its block loop (no call and no boxed index per element). Inline and `@PublishedApi`
 * because the API's inline functions call them: the subclass is regenerated in the user's code.
 */

/** `parallelForEach`: [action] for each index. */
@PublishedApi
internal inline fun forEachLoop(crossinline action: (Int) -> Unit): RangeLoop = object : RangeLoop() {
    override fun runBlock(acc: Any?, from: Int, count: Int): Any? {
        val end = from + count
        for (i in from until end) action(i)
        return null
    }

    override fun runLastIndex(acc: Any?): Any? {
        action(Int.MAX_VALUE)
        return null
    }
}

/** `parallelMap`: `out[i] = transform(items[i])` for each index of [items] (a `RandomAccess` list). */
@PublishedApi
internal inline fun <T, R> mapLoop(items: List<T>, out: Array<Any?>, crossinline transform: (T) -> R): RangeLoop =
    object : RangeLoop() {
        override fun runBlock(acc: Any?, from: Int, count: Int): Any? {
            val end = from + count
            for (i in from until end) out[i] = transform(items[i])
            return null
        }
    }

/** `parallelFold`: each piece folds its indices with [operation] from [initial]; pieces are combined with [combine]. */
@PublishedApi
internal inline fun <reified R> foldLoop(
    crossinline initial: () -> R,
    crossinline operation: (R, Int) -> R,
    crossinline combine: (R, R) -> R,
): RangeLoop = object : RangeLoop() {
    override fun newAccumulator(): Any? = initial()

    // R is reified so that an accumulator of Long, Int or Double stays a primitive across
    // a block: a loop-carried boxed value costs an allocation per index, which the JIT
    // cannot remove (the sum of squares ran 7 x slower than a plain loop that way).
    private val primitive = when {
        null is R -> 0
        R::class == Long::class -> 1
        R::class == Int::class -> 2
        R::class == Double::class -> 3
        else -> 0
    }

    // The loops run `i` from `from` until `end` (not `from + k` for k below `count`): the
    // JIT compiles that form 10-20% faster (docs/loops.md, "The block loop").
    @Suppress("UNCHECKED_CAST")
    override fun runBlock(acc: Any?, from: Int, count: Int): Any? {
        val end = from + count
        when (primitive) {
            1 -> {
                var r = acc as Long
                for (i in from until end) r = operation(r as R, i) as Long
                return r
            }
            2 -> {
                var r = acc as Int
                for (i in from until end) r = operation(r as R, i) as Int
                return r
            }
            3 -> {
                var r = acc as Double
                for (i in from until end) r = operation(r as R, i) as Double
                return r
            }
        }
        var r = acc as R
        for (i in from until end) r = operation(r, i)
        return r
    }

    @Suppress("UNCHECKED_CAST")
    override fun runLastIndex(acc: Any?): Any? = operation(acc as R, Int.MAX_VALUE)

    @Suppress("UNCHECKED_CAST")
    override fun combine(left: Any?, right: Any?): Any? = combine(left as R, right as R)
}
