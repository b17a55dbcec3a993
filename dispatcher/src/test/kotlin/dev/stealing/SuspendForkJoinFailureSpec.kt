package dev.stealing

import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.types.shouldBeInstanceOf
import kotlinx.coroutines.CancellationException as KCancellationException
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.Job
import kotlinx.coroutines.TimeoutCancellationException
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeout
import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicBoolean
import java.util.concurrent.atomic.AtomicInteger
import java.util.concurrent.atomic.AtomicReference

/**
 * `forkJoin` when a half throws, the caller is cancelled or a timeout fires: which exception
 * is thrown and which is suppressed, and no half is left running once `forkJoin` returns.
 */
class SuspendForkJoinFailureSpec : FunSpec({
    // ---- exceptions and cancellation --------------------------------------------------------

    test("left throws while right is queued: right never starts, forkJoin throws left's exception") {
        StealingDispatcher(1, "fj-left-throws").use { d ->
            val rightRan = AtomicBoolean()
            runBlocking {
                withContext(d) {
                    shouldThrow<IllegalStateException> {
                        forkJoin({ error("left") }, { rightRan.set(true) })
                    }.message shouldBe "left"
                }
            }
            rightRan.get() shouldBe false
            d.stats().forksInlined shouldBe 1L
        }
    }

    test("right throws inline: forkJoin throws it after left completed") {
        StealingDispatcher(1, "fj-right-throws").use { d ->
            val leftDone = AtomicBoolean()
            runBlocking {
                withContext(d) {
                    shouldThrow<IllegalArgumentException> {
                        forkJoin({ leftDone.set(true) }, { throw IllegalArgumentException("right") })
                    }.message shouldBe "right"
                }
            }
            leftDone.get() shouldBe true
        }
    }

    test("stolen right throws first, then left: right's exception is thrown, left's suppressed, after both ended") {
        StealingDispatcher(1, "fj-both-right-first").use { d ->
            val rightJob = CompletableDeferred<Job>()
            val leftEnded = AtomicBoolean()
            val e = runBlocking {
                withContext(d) {
                    shouldThrow<IllegalStateException> {
                        forkJoin(
                            {
                                rightJob.await().join() // suspends: the worker runs right as a coroutine; it fails and ends
                                leftEnded.set(true)
                                throw IllegalStateException("left")
                            },
                            {
                                rightJob.complete(currentCoroutineContext()[Job]!!)
                                throw IllegalStateException("right")
                            },
                        )
                    }
                }
            }
            e.message shouldBe "right"
            e.suppressed.map { it.message } shouldBe listOf("left")
            leftEnded.get() shouldBe true
            d.stats().forksStolen shouldBe 1L
        }
    }

    test("left throws while stolen right runs: right is cancelled, left's exception thrown with right's suppressed") {
        StealingDispatcher(1, "fj-both-left-first").use { d ->
            val rightStarted = CompletableDeferred<Unit>()
            val rightSawCancel = AtomicBoolean()
            val e = runBlocking {
                withContext(d) {
                    shouldThrow<IllegalStateException> {
                        forkJoin(
                            {
                                rightStarted.await()
                                throw IllegalStateException("left")
                            },
                            {
                                rightStarted.complete(Unit)
                                try {
                                    awaitCancellation()
                                } catch (c: KCancellationException) {
                                    rightSawCancel.set(true)
                                    throw IllegalStateException("right, after its cancellation")
                                }
                            },
                        )
                    }
                }
            }
            e.message shouldBe "left"
            e.suppressed.map { it.message } shouldBe listOf("right, after its cancellation")
            rightSawCancel.get() shouldBe true
        }
    }

    test("left throws while stolen right runs and right just ends cancelled: only left's exception, nothing suppressed") {
        StealingDispatcher(1, "fj-left-cancels").use { d ->
            val rightStarted = CompletableDeferred<Unit>()
            val e = runBlocking {
                withContext(d) {
                    shouldThrow<IllegalStateException> {
                        forkJoin({ rightStarted.await(); error("left") }, { rightStarted.complete(Unit); awaitCancellation() })
                    }
                }
            }
            e.message shouldBe "left"
            e.suppressed.size shouldBe 0
        }
    }

    test("stolen right throws while left completes normally: left runs to its end, then right's exception") {
        StealingDispatcher(1, "fj-right-stolen-throws").use { d ->
            val rightJob = CompletableDeferred<Job>()
            val leftFinished = AtomicBoolean()
            runBlocking {
                withContext(d) {
                    shouldThrow<IllegalArgumentException> {
                        forkJoin(
                            { rightJob.await().join(); leftFinished.set(true) },
                            { rightJob.complete(currentCoroutineContext()[Job]!!); throw IllegalArgumentException("right") },
                        )
                    }.message shouldBe "right"
                }
            }
            leftFinished.get() shouldBe true
        }
    }

    test("the caller cancelled while right is stolen: both halves are cancelled and have ended when the caller ends") {
        StealingDispatcher(2, "fj-cancel-stolen").use { d ->
            val bothStarted = CountDownLatch(2)
            val ended = AtomicInteger()
            val thrown = AtomicReference<Throwable>()
            runBlocking {
                val job = launch(d) {
                    try {
                        forkJoin(
                            { try { bothStarted.countDown(); awaitCancellation() } finally { ended.incrementAndGet() } },
                            { try { bothStarted.countDown(); awaitCancellation() } finally { ended.incrementAndGet() } },
                        )
                    } catch (e: Throwable) {
                        thrown.set(e)
                        throw e
                    }
                }
                withContext(Dispatchers.IO) { bothStarted.await(10, TimeUnit.SECONDS) } shouldBe true
                job.cancel()
                withTimeout(10_000) { job.join() }
            }
            ended.get() shouldBe 2
            thrown.get().shouldBeInstanceOf<KCancellationException>()
            d.stats().forksStolen shouldBe 1L
        }
    }

    test("the caller cancelled while right is still queued: right never starts") {
        StealingDispatcher(1, "fj-cancel-queued").use { d ->
            val leftRunning = CountDownLatch(1)
            val proceed = CountDownLatch(1)
            val rightRan = AtomicBoolean()
            val thrown = AtomicReference<Throwable>()
            runBlocking {
                val job = launch(d) {
                    try {
                        forkJoin(
                            { leftRunning.countDown(); proceed.await(10, TimeUnit.SECONDS) }, // holds the only worker: right stays queued
                            { rightRan.set(true) },
                        )
                    } catch (e: Throwable) {
                        thrown.set(e)
                    }
                }
                withContext(Dispatchers.IO) { leftRunning.await(10, TimeUnit.SECONDS) } shouldBe true
                job.cancel()
                proceed.countDown()
                withTimeout(10_000) { job.join() }
            }
            rightRan.get() shouldBe false
            thrown.get().shouldBeInstanceOf<KCancellationException>()
        }
    }

    test("withTimeout around a fork tree: it times out and no half is left running") {
        StealingDispatcher(2, "fj-timeout").use { d ->
            val running = AtomicInteger()
            val started = AtomicInteger()
            suspend fun tree(depth: Int): Int = if (depth == 0) {
                running.incrementAndGet()
                started.incrementAndGet()
                try { delay(60_000); 1 } finally { running.decrementAndGet() } // never ends in time
            } else forkJoin({ tree(depth - 1) }, { tree(depth - 1) }).let { it.first + it.second }
            runBlocking {
                withContext(d) {
                    // Leaves suspend, so their workers go on to the halves still queued: many (on a
                    // fast machine all) leaves start before the timeout; none can end before it.
                    shouldThrow<TimeoutCancellationException> { withTimeout(100) { tree(12) } }
                }
            }
            running.get() shouldBe 0 // every half had ended when forkJoin threw
            (started.get() in 1..4096) shouldBe true
            d.stats().pendingTimers.sum() shouldBe 0 // every leaf's delay was cancelled and removed
        }
    }
})
