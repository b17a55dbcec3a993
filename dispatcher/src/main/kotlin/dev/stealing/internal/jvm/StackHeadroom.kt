package dev.stealing.internal.jvm

/**
 * Stack to spare before a step that an Error must not cut in half. A `StackOverflowError` can be
 * thrown at any call, so a step made of calls (a CAS on a count, then the thread start or lock
 * that the count stands for, then its undo if that fails) can stop after its first part, leaving
 * a count or a held lock that no later event repairs. [reserve] recurses deeper than such a step
 * goes and returns: it throws the `StackOverflowError` itself, before the step changed anything,
 * if the stack would not have held the step.
 *
 * How deep: [FRAMES] calls of a method the JIT inlines into itself at most once
 * (`MaxRecursiveInlineLevel`), so at least half of them are real frames, of 16 bytes or more
 * compiled (return address and frame pointer) and about 90 interpreted: 8 KB or more, where the
 * steps it guards (a ReentrantLock, a Worker's construction, Thread.start) use a few KB. The
 * JVM's shadow zone (20 pages on Linux x64) is checked at every call anyway, so only the frames'
 * own depth counts. It costs about a microsecond: it guards thread starts and the pool's lock, not
 * the wake-up path, which repairs itself instead (`IdleControl.finishPop`).
 */
internal object StackHeadroom {
    private const val FRAMES = 1024

    /** Throws `StackOverflowError` now if the stack could not hold a step guarded by it. */
    @JvmStatic
    fun reserve() {
        reserve(FRAMES)
    }

    /**
     * [reserve] for a step of a few calls only, on a path where a microsecond is too much: [frames]
     * calls deep, about 0.8 ns each.
     */
    @JvmStatic
    fun reserve(frames: Int) {
        check(depth(frames) == frames) // never false: keeps the recursion from being dropped
    }

    @JvmStatic
    private fun depth(n: Int): Int = if (n == 0) 0 else depth(n - 1) + 1
}
