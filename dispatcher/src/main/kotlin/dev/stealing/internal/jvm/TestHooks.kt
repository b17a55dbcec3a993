package dev.stealing.internal.jvm

/**
 * Whether the engine reads its test hooks: the points where a test makes a step fail or wait
 * (`MpmcTaskQueue.afterClaim`, between a producer's claim of a slot and its write;
 * `IdleControl.faultHook`, the steps of a wake-up, a start and an idle transition;
 * `DeadlineHeap.beforeAllocation`, the arrays of a timer heap). Off unless
 * the JVM runs with `-Ddev.stealing.testHooks=true`, which this project's test suite sets (the
 * surefire configuration in dispatcher/pom.xml). A static final, so in every other JVM the JIT
 * folds a hook's read away and the hot path it sits on pays nothing for it.
 */
internal object TestHooks {
    @JvmField
    val ENABLED: Boolean = java.lang.Boolean.getBoolean("dev.stealing.testHooks")

    /** For a hook's setter: a hook set where it is never read would make its test pass vacuously. */
    fun requireEnabled() {
        check(ENABLED) { "test hooks are off: run the JVM with -Ddev.stealing.testHooks=true" }
    }
}
