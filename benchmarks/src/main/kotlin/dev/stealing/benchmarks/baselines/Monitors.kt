package dev.stealing.benchmarks.baselines

/**
 * [lock]'s monitor, for `wait`/`notify`/`notifyAll`: Kotlin reaches them only through
 * `java.lang.Object`, which it maps to `Any` and warns about; the baselines name it here only.
 */
@Suppress("PLATFORM_CLASS_MAPPED_TO_KOTLIN")
internal fun monitorOf(lock: Any): java.lang.Object = lock as java.lang.Object
