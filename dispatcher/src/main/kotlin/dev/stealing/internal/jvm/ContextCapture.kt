package dev.stealing.internal.jvm

import io.micrometer.context.ContextSnapshotFactory
import java.util.concurrent.Callable

/**
 * ThreadLocal context propagation for the Executor path ([StealingOptions.propagateContext]),
 * through `io.micrometer:context-propagation`: the `ThreadLocalAccessor`s registered in its
 * `ContextRegistry` (what Reactor, Spring and Micrometer tracing register) are captured on the
 * submitting thread and restored around the task on the worker, then the worker's own values
 * come back. Coroutines never go through here: kotlinx context elements do that job.
 *
 * This object is touched only when the option is on, so the library runs without
 * context-propagation when it is off ([isContextPropagationPresent] checks for it without
 * loading this object).
 */
internal object ContextCapture {
    private val factory = ContextSnapshotFactory.builder().build()

    fun wrap(task: Runnable): Runnable = factory.captureAll().wrap(task)

    fun <T> wrap(task: Callable<T>): Callable<T> = factory.captureAll().wrap(task)
}

/**
 * Whether `io.micrometer:context-propagation` is on the class path or in the module graph
 * (checked by name only). When it is, the library's module is made to read it: on the module
 * path a named module reads no class-path code otherwise, even with `requires static`.
 */
internal fun isContextPropagationPresent(): Boolean = try {
    val factory = Class.forName("io.micrometer.context.ContextSnapshotFactory", false, ContextCapture::class.java.classLoader)
    ContextCapture::class.java.module.addReads(factory.module)
    true
} catch (e: ClassNotFoundException) {
    false
}
