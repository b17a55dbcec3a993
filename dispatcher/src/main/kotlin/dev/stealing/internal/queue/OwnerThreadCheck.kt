package dev.stealing.internal.queue

/**
 * The assertion behind a [WorkDeque]'s owner-only operations: that they all run on one thread,
 * the owner. The owner is given at construction or, when that is null (tests that drive a deque
 * from a thread they did not build it on), is the first thread that calls [check].
 *
 * Callers test [ENABLED] first: a static final that the JIT folds away without `-ea`, so the
 * check then costs nothing (Kotlin's `assert` would evaluate its argument even then).
 */
internal class OwnerThreadCheck(
    /** Read and written only by [check]; the operations it guards run on one thread when correct. */
    private var owner: Thread?,
    /** What the owner operations belong to, for the message. */
    private val what: String,
) {
    /** Throws [AssertionError] unless the caller is the owner; binds an ownerless check to it. */
    fun check() {
        val me = Thread.currentThread()
        val o = owner ?: me.also { owner = it }
        if (o !== me) throw AssertionError("owner-only $what operation on $me; the owner is $o")
    }

    companion object {
        /** Whether assertions are enabled for this package (`-ea`): owner operations check their thread. */
        @JvmField val ENABLED: Boolean = OwnerThreadCheck::class.java.desiredAssertionStatus()
    }
}
