package dev.stealing

import dev.stealing.testsupport.stressMultiplier
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.types.shouldBeInstanceOf
import kotlinx.coroutines.CancellationException as KCancellationException
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Job
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.cancel
import kotlinx.coroutines.future.asCompletableFuture
import java.time.Duration
import java.util.concurrent.ExecutionException
import java.util.concurrent.TimeUnit

/**
 * `forkJoin` recursions thousands of stolen halves deep: each half that another worker (or the
 * caller's own worker, once the caller suspended) took runs as a coroutine of its own, inside
 * the one above it. Success, a failure and a cancellation must all end at such depths.
 */
class DeepForkJoinSpec : FunSpec({
    /**
     * A spine [depth] deep in which every right half is stolen: each left half suspends until
     * the bottom is reached, so its worker runs the right half from the deque as a coroutine.
     * The bottom then returns 0 ([bottom] = "return"), throws, or waits to be cancelled; the
     * top's left half throws once the bottom is reached if [topLeftThrows].
     */
    class Spine(val depth: Int, val bottom: String, val topLeftThrows: Boolean, val cancelsOwnScopeAt: Int = -1) {
        val bottomReached = CompletableDeferred<Unit>()

        suspend fun run(d: Int): Int {
            if (d == 0) {
                bottomReached.complete(Unit)
                when (bottom) {
                    "return" -> return 0
                    "throw" -> throw IllegalStateException("leaf failed")
                    else -> awaitCancellation()
                }
            }
            val (a, b) = forkJoin({
                bottomReached.await()
                if (d == depth && topLeftThrows) throw IllegalStateException("top left failed")
                if (d == cancelsOwnScopeAt) kotlinx.coroutines.currentCoroutineContext()[Job]!!.cancel()
                1
            }, { run(d - 1) })
            return a + b
        }
    }

    val depth = 5_000

    /** Runs [spine] on a pool of two; cancels the root once the bottom is reached if [cancelRoot]. */
    fun outcome(spine: Spine, cancelRoot: Boolean = false): Result<Int> {
        val d = StealingDispatcher(2, "deep-fork-join", StealingOptions(starvationInterval = Duration.ZERO))
        try {
            val scope = CoroutineScope(Job())
            val root = scope.async(d) { spine.run(spine.depth) }
            if (cancelRoot) {
                spine.bottomReached.asCompletableFuture().get(60, TimeUnit.SECONDS)
                root.cancel(KCancellationException("root cancelled"))
            }
            return try {
                Result.success(root.asCompletableFuture().get(60, TimeUnit.SECONDS))
            } catch (e: ExecutionException) {
                Result.failure(e.cause!!)
            } catch (e: java.util.concurrent.CancellationException) {
                Result.failure(e)
            } finally {
                scope.cancel()
            }
        } finally {
            d.close()
        }
    }

    test("success: a spine of $depth stolen halves returns") {
        outcome(Spine(depth, bottom = "return", topLeftThrows = false)).getOrThrow() shouldBe depth
    }

    test("a failure at the bottom of $depth stolen halves is thrown at the top") {
        val e = outcome(Spine(depth, bottom = "throw", topLeftThrows = false)).exceptionOrNull()
        e.shouldBeInstanceOf<IllegalStateException>()
        e.message shouldBe "leaf failed"
    }

    test("a failure at the top cancels $depth stolen halves below it and is thrown") {
        // Before the fix the cancellation went down the chain of nested jobs recursively and
        // overflowed the stack after about 850 of them; the rest were never cancelled.
        val e = outcome(Spine(depth, bottom = "wait", topLeftThrows = true)).exceptionOrNull()
        e.shouldBeInstanceOf<IllegalStateException>()
        e.message shouldBe "top left failed"
    }

    test("a stolen half that cancels its own scope cancels the stolen halves below it") {
        // The left half at level 2,500 runs in the coroutine of the stolen half above it and
        // cancels that coroutine's job. Before the watch on each half's job, the halves below,
        // whose jobs are children of the root rather than of that job, were never cancelled.
        val e = outcome(Spine(depth, bottom = "wait", topLeftThrows = false, cancelsOwnScopeAt = depth / 2)).exceptionOrNull()
        e.shouldBeInstanceOf<java.util.concurrent.CancellationException>()
    }

    test("cancelling the root cancels $depth stolen halves below it") {
        val e = outcome(Spine(depth, bottom = "wait", topLeftThrows = false), cancelRoot = true).exceptionOrNull()
        e.shouldBeInstanceOf<java.util.concurrent.CancellationException>()
    }

    test("soak: spines of random depth (up to 20,000 stolen halves) end in the expected way, each kind of ending") {
        val random = kotlin.random.Random(7)
        val rounds = 8 * stressMultiplier
        val counts = IntArray(4)
        repeat(rounds) { round ->
            val kind = round % 4
            val n = random.nextInt(1, 20_001)
            val result = when (kind) {
                0 -> outcome(Spine(n, bottom = "return", topLeftThrows = false))
                1 -> outcome(Spine(n, bottom = "throw", topLeftThrows = false))
                2 -> outcome(Spine(n, bottom = "wait", topLeftThrows = true))
                else -> outcome(Spine(n, bottom = "wait", topLeftThrows = false), cancelRoot = true)
            }
            withClue("round $round, kind $kind, depth $n: $result") {
                when (kind) {
                    0 -> result.getOrNull() shouldBe n
                    1 -> result.exceptionOrNull()?.message shouldBe "leaf failed"
                    2 -> result.exceptionOrNull()?.message shouldBe "top left failed"
                    else -> result.exceptionOrNull().shouldBeInstanceOf<java.util.concurrent.CancellationException>()
                }
            }
            counts[kind]++
        }
        println(
            "deep forkJoin soak (${System.getProperty("java.version")}, ${Runtime.getRuntime().availableProcessors()} CPUs): " +
                "$rounds spines, ${counts[0]} returned, ${counts[1]} failed at the bottom, ${counts[2]} failed at the top, ${counts[3]} cancelled at the root",
        )
    }
})
