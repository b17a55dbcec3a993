package dev.stealing

import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.micrometer.context.ContextRegistry
import io.micrometer.context.ThreadLocalAccessor
import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicReference

/** A request id in a ThreadLocal, registered with context-propagation as MDC or tracing would be. */
private val REQUEST = ThreadLocal<String?>()

private object RequestAccessor : ThreadLocalAccessor<String> {
    override fun key(): Any = "test.request"
    override fun getValue(): String? = REQUEST.get()
    override fun setValue(value: String) = REQUEST.set(value)
    override fun setValue() = REQUEST.remove()
}

class ContextPropagationSpec : FunSpec({
    beforeSpec { ContextRegistry.getInstance().registerThreadLocalAccessor(RequestAccessor) }
    afterSpec { ContextRegistry.getInstance().removeThreadLocalAccessor("test.request") }

    test("propagateContext = true: execute, submit and fork see the submitter's ThreadLocals, then the worker's come back") {
        StealingDispatcher(1, "ctx-on", StealingOptions(propagateContext = true)).use { d ->
            REQUEST.set("req-1")
            try {
                val seen = AtomicReference<String?>()
                val done = CountDownLatch(1)
                d.executor.execute { seen.set(REQUEST.get()); done.countDown() }
                done.await(10, TimeUnit.SECONDS) shouldBe true
                seen.get() shouldBe "req-1"
                d.executor.submit<String?> { REQUEST.get() }.get() shouldBe "req-1"
                d.fork { REQUEST.get() }.join() shouldBe "req-1"
            } finally {
                REQUEST.remove()
            }
            // Restored on the worker after each task: a task submitted without context sees none.
            d.executor.submit<String?> { REQUEST.get() }.get() shouldBe null
        }
    }

    test("a fork inside a task carries the task's context and is still inlined by join") {
        StealingDispatcher(1, "ctx-inline", StealingOptions(propagateContext = true)).use { d ->
            REQUEST.set("outer")
            try {
                d.fork {
                    REQUEST.set("inner") // changed inside the task: the child captures this one
                    d.fork { REQUEST.get() }.join()
                }.join() shouldBe "inner"
            } finally {
                REQUEST.remove()
            }
            d.stats().inlined shouldBe 1
        }
    }

    test("propagateContext = false (default): nothing is captured") {
        StealingDispatcher(1, "ctx-off").use { d ->
            REQUEST.set("req-2")
            try {
                d.executor.submit<String?> { REQUEST.get() }.get() shouldBe null
            } finally {
                REQUEST.remove()
            }
        }
    }
})
