package dev.stealing.testsupport

import dev.stealing.StealingDispatcher
import dev.stealing.StealingOptions
import dev.stealing.internal.idle.Ctl
import dev.stealing.internal.idle.IdleControl
import dev.stealing.internal.idle.ParkState
import dev.stealing.internal.worker.Worker
import io.kotest.matchers.shouldBe
import java.time.Duration
import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit
import java.util.function.IntConsumer

// Shared by the specs of Errors in the signalling path (SignalErrorSpec, WorkerLoopErrorSpec):
// a fault injected at a step of idle control, and the pools they inject into.

internal fun describeCtl(c: Long) =
    "ctl: top=${Ctl.top(c)} searching=${Ctl.searching(c)} live=${Ctl.live(c)} active=${Ctl.active(c)}"

/** An Error thrown by a test's fault hook: stands in for a `StackOverflowError` or `OutOfMemoryError` at that step. */
internal class InjectedError : Error("injected")

/** Arms [idle]'s fault hook to throw [error] once, at [step], on the calling thread only. */
internal fun armOnce(idle: IdleControl, step: Int, error: () -> Throwable = { InjectedError() }) {
    val owner = Thread.currentThread()
    idle.faultHook = IntConsumer { s ->
        if (s == step && Thread.currentThread() === owner) {
            idle.faultHook = null
            throw error()
        }
    }
}

/** Arms [idle]'s fault hook to throw an [InjectedError] once, at [step], on whichever worker thread comes first. */
internal fun armOnWorkers(idle: IdleControl, step: Int) {
    val fired = java.util.concurrent.atomic.AtomicBoolean()
    idle.faultHook = IntConsumer { s ->
        if (s == step && Thread.currentThread() is Worker && fired.compareAndSet(false, true)) throw InjectedError()
    }
}

/** A one-worker pool whose only worker has run a task and parked idle. */
internal fun parkedPool(name: String, interval: Duration = Duration.ofMillis(50)): StealingDispatcher {
    val d = StealingDispatcher(1, name, StealingOptions(spinRounds = 0, starvationInterval = interval))
    val first = CountDownLatch(1)
    d.executor.execute { first.countDown() }
    first.await(10, TimeUnit.SECONDS) shouldBe true
    eventually(10_000) { d.pool.workers[0].idleNode.parkState() == ParkState.IDLE } shouldBe true
    return d
}

internal fun stopWithoutHook(d: StealingDispatcher) {
    d.pool.idle.faultHook = null
    d.executor.shutdownNow()
    d.executor.awaitTermination(10, TimeUnit.SECONDS)
}
