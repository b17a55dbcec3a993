package dev.stealing.internal.idle

/**
 * Layout of the pool's control word. Fields, low to high:
 * `TOP` (index + 1 of the top idle worker, 0 = none), `SEARCHING` (workers searching),
 * `LIVE` (worker threads alive), `ACTIVE` (live workers neither idle nor blocked), `VERSION`
 * (bumped on every stack pop/push, against ABA).
 *
 * Counts may briefly exceed the number of threads by up to one per thread (see the counting
 * rule in [IdleControl]), so [MAX_THREADS] leaves the 12-bit fields room for twice that.
 */
internal object Ctl {
    const val FIELD_BITS = 12
    const val FIELD_MASK = (1L shl FIELD_BITS) - 1
    const val VERSION_BITS = 16

    /** Most worker threads a pool may have (parallelism plus extras). */
    const val MAX_THREADS = (1 shl (FIELD_BITS - 1)) - 1

    const val TOP_SHIFT = 0
    const val SEARCHING_SHIFT = 12
    const val LIVE_SHIFT = 24
    const val ACTIVE_SHIFT = 36
    const val VERSION_SHIFT = 48

    const val TOP_MASK = FIELD_MASK shl TOP_SHIFT
    const val SEARCHING_MASK = FIELD_MASK shl SEARCHING_SHIFT
    const val LIVE_MASK = FIELD_MASK shl LIVE_SHIFT
    const val ACTIVE_MASK = FIELD_MASK shl ACTIVE_SHIFT
    const val VERSION_MASK = ((1L shl VERSION_BITS) - 1) shl VERSION_SHIFT

    const val SEARCHING_ONE = 1L shl SEARCHING_SHIFT
    const val LIVE_ONE = 1L shl LIVE_SHIFT
    const val ACTIVE_ONE = 1L shl ACTIVE_SHIFT
    const val VERSION_ONE = 1L shl VERSION_SHIFT

    fun top(c: Long): Int = ((c and TOP_MASK) ushr TOP_SHIFT).toInt()
    fun searching(c: Long): Int = ((c and SEARCHING_MASK) ushr SEARCHING_SHIFT).toInt()
    fun live(c: Long): Int = ((c and LIVE_MASK) ushr LIVE_SHIFT).toInt()
    fun active(c: Long): Int = ((c and ACTIVE_MASK) ushr ACTIVE_SHIFT).toInt()
    fun version(c: Long): Int = ((c and VERSION_MASK) ushr VERSION_SHIFT).toInt()

    /** [c] with the stack top replaced by [top] and the version bumped (wrapping). */
    fun withTop(c: Long, top: Int): Long {
        val version = (c + VERSION_ONE) and VERSION_MASK
        return (c and (TOP_MASK or VERSION_MASK).inv()) or version or (top.toLong() shl TOP_SHIFT)
    }
}
