package dev.stealing.internal.loops

import dev.stealing.internal.join.JoinableTask
import dev.stealing.internal.jvm.fieldHandle
import dev.stealing.internal.worker.Worker
import dev.stealing.internal.worker.WorkerHost
import java.lang.invoke.VarHandle
import java.util.concurrent.Callable
import java.util.concurrent.CancellationException

/**
 * One parallel loop over the indices `lo until hi` (as longs, so `Int.MIN_VALUE..Int.MAX_VALUE`
 * has a size), split on demand: **lazy binary splitting** (Tzannes, Caragea, Barua and Vishkin,
 * "Lazy binary-splitting", PPoPP 2010) on the pool's deques.
 *
 * A *piece* is a range one worker runs from its start. It runs in blocks of 1, 2, 4, ...
 * [MAX_BLOCK] indices; before each block, if the worker's own deque is empty and the piece
 * still has two indices or more, it splits: the upper half of what remains is pushed onto the
 * deque as a piece of its own (a [JoinableTask], so an idle worker is woken to steal it) and the
 * piece goes on with the lower half. An empty deque is the signal: while the last half pushed
 * is still there nobody was hungry enough to take it, so the piece does not split again; once
 * a thief took it, the next block boundary pushes a new half. A pool of one worker never
 * splits, so the loop costs a plain loop plus one check per block. No grain size is needed:
 * pieces are as many as the steals, and each split costs a push and a pop.
 *
 * At its end a piece joins the halves it pushed, newest first ([JoinableTask.joinResult]: a half still
 * in the deque is popped and run here, itself splitting again if the deque is empty; a stolen
 * one is helped and then waited for), and combines its accumulator with theirs in index order:
 * the newest half covers the indices right after the piece's own last block.
 *
 * **Stopping.** The first failure of user code (the body, or a fold's initial or combine) is
 * kept ([failure]); later ones are added to it as suppressed; both set [stopped], as does
 * [cancel]. A piece checks [stopped] before each block and before it starts, so pieces not
 * started never start and running ones end at their next block boundary; every pushed half is
 * still joined, so when the root piece returns, every piece has ended.
 *
 * Subclasses say what a block does ([runBlock]) and how accumulators are made and combined.
 * An accumulator is whatever the subclass uses (null for a loop without one). The Kotlin loops
 * (`parallelForEach`, `parallelMap`, `parallelFold`) are inline functions that subclass this at
 * each call site, so the user's lambda is compiled into [runBlock]'s loop: no call and no boxed
 * index per element. That makes this class part of the library's binary interface
 * (`@PublishedApi`): its constructor and the members such a subclass overrides must stay.
 */
@PublishedApi
internal abstract class RangeLoop : CancellableLoop {
    /**
     * The pool whose workers split and steal this loop's pieces; null: never split. Written by
     * [runAll] before the first piece is pushed, so a thief sees it through the deque's
     * publication of that piece.
     */
    private var pool: WorkerHost? = null

    /** The first failure of user code; later ones are added to it as suppressed. Through [FAILURE]. */
    @Volatile private var failure: Throwable? = null

    /**
     * Set after [failure] is (or by [cancel]); read before each block. Volatile: a worker that
     * sees it true then reads [failure] at the end through the joins, which order it.
     */
    @Volatile private var stopped = false

    /** A fresh accumulator for a piece. */
    @PublishedApi
    internal open fun newAccumulator(): Any? = null

    /**
     * Runs the [count] indices from [from] on [acc] and returns the new accumulator. `from +
     * count` never passes Int.MAX_VALUE, so a block can loop `from until from + count`; the
     * index Int.MAX_VALUE itself goes to [runLastIndex].
     */
    @PublishedApi
    internal abstract fun runBlock(acc: Any?, from: Int, count: Int): Any?

    /**
     * Runs the index Int.MAX_VALUE on [acc] (after [runBlock] ran the indices before it) and
     * returns the new accumulator. Only a range that reaches Int.MAX_VALUE calls it: a loop
     * whose ranges cannot (a list's indices, Java's exclusive end) keeps this default.
     */
    @PublishedApi
    internal open fun runLastIndex(acc: Any?): Any? =
        throw IllegalStateException("${javaClass.name} cannot run the index Int.MAX_VALUE")

    /** Combines the accumulator of a range with that of the range right after it. */
    @PublishedApi
    internal open fun combine(left: Any?, right: Any?): Any? = left

    /** The caller was cancelled: running pieces stop at their next block, pieces not started never start. */
    override fun cancel() {
        stopped = true
    }

    /**
     * Runs the whole range `lo until hi` from here, splitting it onto [pool]'s workers if this
     * thread is one of them (null: never split), and returns its accumulator; throws the first
     * failure.
     */
    fun runAll(pool: WorkerHost?, lo: Long, hi: Long): Any? {
        this.pool = pool
        val acc = runPiece(lo, hi)
        failure?.let { throw it }
        return acc
    }

    /**
     * Runs `lo until hi` as one piece on the calling thread (see the class comment); never
     * throws: a failure is recorded and stops the loop.
     */
    fun runPiece(lo: Long, hi: Long): Any? {
        if (stopped) return null
        val w = Thread.currentThread() as? Worker
        val pool = pool
        val splits = w != null && pool != null && w.pool === pool && pool.parallelism > 1
        w?.counters?.countLoopPiece()
        var acc: Any? = null
        var halves: Array<JoinableTask?>? = null
        var pushed = 0
        try {
            acc = newAccumulator()
            var i = lo
            var end = hi
            var block = 1
            while (i < end) {
                if (splits && end - i >= 2 && w!!.deque.isEmpty()) {
                    val mid = i + ((end - i) ushr 1)
                    val half = JoinableTask(Piece(this, mid, end))
                    if (w.pushFork(half)) { // false: the pool is stopping; the piece runs it all
                        w.counters.countLoopSplit()
                        val a = halves ?: arrayOfNulls<JoinableTask?>(MAX_HALVES).also { halves = it }
                        a[pushed++] = half
                        end = mid
                    }
                }
                val n = minOf(block.toLong(), end - i).toInt()
                acc = if (i + n <= Int.MAX_VALUE) runBlock(acc, i.toInt(), n) else runLastIndex(runBlock(acc, i.toInt(), n - 1))
                i += n
                if (block < MAX_BLOCK) block = block shl 1
                if (stopped) break
            }
        } catch (e: Throwable) {
            fail(e)
        }
        // Every pushed half is joined, even after a failure: one not started sees `stopped` and
        // returns at once; one running ends at its next block.
        while (pushed > 0) {
            val half = halves!![--pushed]!!
            halves[pushed] = null
            val right = try {
                half.joinResult()
            } catch (e: CancellationException) {
                // Discarded unrun by shutdownNow(): its indices never ran.
                fail(IllegalStateException("a piece of the loop was discarded by shutdownNow() before it ran", e))
                continue
            } catch (e: Throwable) {
                fail(e)
                continue
            }
            if (!stopped) {
                acc = try { combine(acc, right) } catch (e: Throwable) { fail(e); acc }
            }
        }
        return acc
    }

    /** Records [e]: the first failure, or suppressed into it; stops the loop. */
    private fun fail(e: Throwable) {
        if (!FAILURE.compareAndSet(this, null, e)) {
            val first = failure!!
            if (first !== e) first.addSuppressed(e) // Throwable's own lock guards its list
        }
        stopped = true
    }

    /** A pushed half: a piece of its own when a worker runs it (or nothing, if the loop stopped). */
    private class Piece(private val loop: RangeLoop, private val lo: Long, private val hi: Long) : Callable<Any?> {
        override fun call(): Any? = loop.runPiece(lo, hi)

        override fun toString(): String = "loop piece [$lo, $hi)"
    }

    internal companion object {
        /** The longest block between two checks for a split or a stop. */
        const val MAX_BLOCK = 4096

        /** Each split halves what a piece has left, of at most 2^32 indices. */
        private const val MAX_HALVES = 33

        private val FAILURE: VarHandle = fieldHandle(RangeLoop::class.java, "failure", Throwable::class.java)
    }
}
