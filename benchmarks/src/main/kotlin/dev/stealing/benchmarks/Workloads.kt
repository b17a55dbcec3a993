package dev.stealing.benchmarks

import dev.stealing.StealingDispatcher
import dev.stealing.awaitInline
import dev.stealing.forkJoin
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.Deferred
import kotlinx.coroutines.Job
import kotlinx.coroutines.async
import kotlinx.coroutines.channels.Channel
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import kotlinx.coroutines.yield
import java.util.concurrent.CountDownLatch
import java.util.concurrent.Executor
import java.util.concurrent.RecursiveTask
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicBoolean
import java.util.concurrent.atomic.AtomicInteger
import java.util.concurrent.locks.LockSupport

/*
 * The workloads, shared by the JMH benchmarks and the report (dev.stealing.benchmarks.report).
 * Each one checks its own result and throws WrongResult when it is wrong. None allocates per
 * task beyond what the workload needs (tasks are preallocated where the workload allows it),
 * so what differs between executors is the executor's own cost.
 */

/** A workload produced a wrong result (lost or duplicated work, wrong value). */
class WrongResult(message: String) : RuntimeException(message)

/** How long any workload waits for completion before it gives up (a hang is a failure). */
val WAIT_LIMIT_SECONDS: Long = java.lang.Long.getLong("bench.waitLimitSeconds", 120L)

/**
 * Counts down [expected] completions; [await] returns when all are in and throws if any task ran
 * twice or the wait timed out. One instance per run (it is armed once).
 */
class Completion(private val expected: Int) {
    private val remaining = AtomicInteger(expected)
    private val done = CountDownLatch(1)
    @Volatile private var overrun = false

    /** Called once by each task. */
    fun complete() {
        val r = remaining.decrementAndGet()
        if (r == 0) done.countDown() else if (r < 0) overrun = true
    }

    fun await(what: String) {
        if (!done.await(WAIT_LIMIT_SECONDS, TimeUnit.SECONDS)) {
            throw WrongResult("$what: only ${expected - remaining.get()} of $expected tasks ran within $WAIT_LIMIT_SECONDS s")
        }
        if (overrun || remaining.get() != 0) throw WrongResult("$what: a task ran more than once (remaining = ${remaining.get()})")
    }
}

// ---------------------------------------------------------------------------------------------
// 1M no-op Runnables from one outside thread (the harness of part 1 of Joe Duffy's 2008 thread-pool series)
// ---------------------------------------------------------------------------------------------

/**
 * The queue/drain benchmark of part 1 of Joe Duffy's 2008 thread-pool series: [count] no-op `Runnable`s submitted by one thread outside the
 * pool, then a wait until all have run. "Separated" runs hold the workers back while the
 * producer queues, as that article does: every task first waits on a gate that opens only after the
 * last submission, so the first task each worker takes parks it and the rest stay queued; the
 * queue phase then measures queuing alone and the drain phase the dequeuing alone. "Overlapped"
 * runs let the workers drain while the producer queues. The same two task objects are submitted
 * every time, so the workload itself allocates nothing per task.
 *
 * Use: [arm], [enqueue], [release] (separated only), [awaitDrain]; or [run] for all four.
 */
class NoopFlood(private val executor: Executor, val count: Int = 1_000_000) {
    @Volatile private var gate = CountDownLatch(0)
    @Volatile private var completion = Completion(0)
    private var separated = false

    private val gated = Runnable {
        gate.await()
        completion.complete()
    }
    private val free = Runnable { completion.complete() }

    fun arm(separated: Boolean) {
        this.separated = separated
        gate = CountDownLatch(if (separated) 1 else 0)
        completion = Completion(count)
    }

    fun enqueue() {
        val task = if (separated) gated else free
        val ex = executor
        for (i in 0 until count) ex.execute(task)
    }

    fun release() = gate.countDown()

    fun awaitDrain() {
        release() // in case a failure skipped it
        completion.await("no-op flood of $count")
    }

    /** One full run; returns (queue ns, drain ns). */
    fun run(separated: Boolean): Pair<Long, Long> {
        arm(separated)
        val t0 = System.nanoTime()
        enqueue()
        val t1 = System.nanoTime()
        release()
        awaitDrain()
        val t2 = System.nanoTime()
        return (t1 - t0) to (t2 - t1)
    }
}

// ---------------------------------------------------------------------------------------------
// Recursive fan-out (part 3 of Duffy's series): N tasks from outside, each queues M children from inside
// ---------------------------------------------------------------------------------------------

/**
 * The recursive queuing benchmark of part 3 of Duffy's series: [top] tasks submitted from outside the pool, each of
 * which, running on a pool thread, submits [children] no-op tasks to the same executor. Every
 * task (parents and children) counts one completion. Parent and child are preallocated.
 */
class FanOut(private val executor: Executor, val top: Int, val children: Int) {
    @Volatile private var completion = Completion(0)
    private val child = Runnable { completion.complete() }
    private val parent = Runnable {
        val ex = executor
        for (i in 0 until children) ex.execute(child)
        completion.complete()
    }

    fun run() {
        val c = Completion(top * (children + 1))
        completion = c
        val ex = executor
        for (i in 0 until top) ex.execute(parent)
        c.await("fan-out $top x $children")
    }
}

// ---------------------------------------------------------------------------------------------
// fib(n) with one coroutine per node, and with Java fork/join
// ---------------------------------------------------------------------------------------------

object Fib {
    private val EXPECTED = IntArray(47).also { f -> f[1] = 1; for (i in 2 until f.size) f[i] = f[i - 1] + f[i - 2] }

    fun expected(n: Int): Int = EXPECTED[n]

    fun check(n: Int, r: Int): Int {
        if (r != EXPECTED[n]) throw WrongResult("fib($n) = $r, expected ${EXPECTED[n]}")
        return r
    }

    /**
     * `async` per node, no cut-off; `awaitInline` on `stealing-inline`, plain `await` elsewhere;
     * on `stealing-forkjoin` one `forkJoin` per node instead of the `async`.
     */
    fun coroutines(ex: ExecutorUnderTest, n: Int): Int =
        check(n, runBlocking { withContext(ex.dispatcher) { if (ex.forkJoin) fibForkJoin(n) else fibAsync(n, ex.awaitInline) } })

    /** The same tree with `forkJoin`: fib(n-1) offered to thieves, fib(n-2) run at once, as rayon's `join`. */
    suspend fun fibForkJoin(n: Int): Int = if (n < 2) n else {
        val (a, b) = forkJoin({ fibForkJoin(n - 2) }, { fibForkJoin(n - 1) })
        a + b
    }

    private suspend fun fibAsync(n: Int, inline: Boolean): Int = if (n < 2) n else coroutineScope {
        val left = async { fibAsync(n - 1, inline) }
        val right = fibAsync(n - 2, inline)
        left.awaitWith(inline) + right
    }

    /**
     * Java fork/join, no cut-off, the same shape on both pools: fork fib(n-1), compute fib(n-2)
     * in place, join the fork. `ForkedTask` on a stealing pool, `RecursiveTask` on `fjp`.
     * Other executors have no fork/join (a blocking join on a fixed pool deadlocks).
     */
    fun forkJoin(ex: ExecutorUnderTest, n: Int): Int {
        val stealing = ex.stealing
        val fjp = ex.forkJoinPool
        val r = when {
            stealing != null -> stealing.fork { fibForked(stealing, n) }.join()
            fjp != null -> fjp.invoke(FibTask(n))
            else -> throw IllegalArgumentException("fork/join fib runs on stealing or fjp, not ${ex.id}")
        }
        return check(n, r)
    }

    private fun fibForked(pool: StealingDispatcher, n: Int): Int {
        if (n < 2) return n
        val left = pool.fork { fibForked(pool, n - 1) }
        val right = fibForked(pool, n - 2)
        return left.join() + right
    }

    private class FibTask(private val n: Int) : RecursiveTask<Int>() {
        override fun compute(): Int {
            if (n < 2) return n
            val left = FibTask(n - 1).also { it.fork() }
            val right = FibTask(n - 2).compute()
            return left.join() + right
        }
    }
}

/** `awaitInline()` or `await()`. */
suspend fun <T> Deferred<T>.awaitWith(inline: Boolean): T = if (inline) awaitInline() else await()

// ---------------------------------------------------------------------------------------------
// Parallel merge sort with a cut-off
// ---------------------------------------------------------------------------------------------

/**
 * Merge sort of [size] pseudo-random ints (fixed seed): ranges of at most [cutoff] elements are
 * sorted with `Arrays.sort`, larger ones split in two, the left half sorted in an `async` child,
 * the right half in place, then merged through a scratch array. [reset] copies the unsorted input
 * back (not part of the measured time); [check] compares with a reference sorted once.
 */
class MergeSort(val size: Int = 10_000_000, val cutoff: Int = 8_192) {
    private val input = IntArray(size).also { a ->
        val rnd = java.util.SplittableRandom(42)
        for (i in a.indices) a[i] = rnd.nextInt()
    }
    private val reference = input.copyOf().also { it.sort() }
    private val work = IntArray(size)
    private val scratch = IntArray(size)

    fun reset() = System.arraycopy(input, 0, work, 0, size)

    fun sort(ex: ExecutorUnderTest) = runBlocking {
        withContext(ex.dispatcher) { if (ex.forkJoin) sortForkJoin(0, size) else sort(0, size, ex.awaitInline) }
    }

    fun check() {
        if (!work.contentEquals(reference)) {
            val i = work.indices.first { work[it] != reference[it] }
            throw WrongResult("merge sort of $size: wrong element at $i (${work[i]}, expected ${reference[i]})")
        }
    }

    /** reset + sort + check. */
    fun run(ex: ExecutorUnderTest) {
        reset(); sort(ex); check()
    }

    private suspend fun sort(lo: Int, hi: Int, inline: Boolean) {
        if (hi - lo <= cutoff) {
            work.sort(lo, hi)
            return
        }
        val mid = (lo + hi) ushr 1
        coroutineScope {
            val left = async { sort(lo, mid, inline) }
            sort(mid, hi, inline)
            left.awaitWith(inline)
        }
        merge(lo, mid, hi)
    }

    /** The same with `forkJoin`: the left half offered to thieves, the right half sorted at once. */
    private suspend fun sortForkJoin(lo: Int, hi: Int) {
        if (hi - lo <= cutoff) {
            work.sort(lo, hi)
            return
        }
        val mid = (lo + hi) ushr 1
        forkJoin({ sortForkJoin(mid, hi) }, { sortForkJoin(lo, mid) })
        merge(lo, mid, hi)
    }

    private fun merge(lo: Int, mid: Int, hi: Int) {
        val a = work
        val t = scratch
        System.arraycopy(a, lo, t, lo, hi - lo)
        var i = lo
        var j = mid
        var k = lo
        while (i < mid && j < hi) a[k++] = if (t[j] < t[i]) t[j++] else t[i++]
        while (i < mid) a[k++] = t[i++]
        while (j < hi) a[k++] = t[j++]
    }
}

// ---------------------------------------------------------------------------------------------
// N-Queens: an irregular search tree, one fork per candidate square, no cut-off
// ---------------------------------------------------------------------------------------------

/**
 * Counts the placements of [n] queens (bitmask backtracking). Every candidate square of every
 * row is a parallel branch, no cut-off: `async` per candidate (awaited newest first, with
 * `awaitInline` on `stealing-inline`), or on `stealing-forkjoin` the candidates of a row split
 * in halves with `forkJoin`, recursively (n - 1 forks for n candidates).
 */
object Queens {
    private val EXPECTED = intArrayOf(1, 1, 0, 0, 2, 10, 4, 40, 92, 352, 724, 2680, 14200, 73712)

    fun run(ex: ExecutorUnderTest, n: Int): Int {
        val r = runBlocking {
            withContext(ex.dispatcher) { if (ex.forkJoin) rowForkJoin(n, 0, 0, 0, 0) else rowAsync(n, 0, 0, 0, 0, ex.awaitInline) }
        }
        if (r != EXPECTED[n]) throw WrongResult("queens($n) = $r, expected ${EXPECTED[n]}")
        return r
    }

    private fun free(n: Int, cols: Int, d1: Int, d2: Int): Int = ((1 shl n) - 1) and (cols or d1 or d2).inv()

    private suspend fun rowAsync(n: Int, row: Int, cols: Int, d1: Int, d2: Int, inline: Boolean): Int {
        if (row == n) return 1
        var avail = free(n, cols, d1, d2)
        if (avail == 0) return 0
        return coroutineScope {
            val children = ArrayList<Deferred<Int>>(Integer.bitCount(avail))
            while (avail != 0) {
                val bit = avail and -avail
                avail = avail xor bit
                children += async { rowAsync(n, row + 1, cols or bit, (d1 or bit) shl 1, (d2 or bit) ushr 1, inline) }
            }
            var sum = 0
            for (i in children.indices.reversed()) sum += children[i].awaitWith(inline)
            sum
        }
    }

    private suspend fun rowForkJoin(n: Int, row: Int, cols: Int, d1: Int, d2: Int): Int {
        if (row == n) return 1
        val avail = free(n, cols, d1, d2)
        return if (avail == 0) 0 else squares(n, row, cols, d1, d2, avail)
    }

    /** The candidates [avail] of one row: one square placed, or the set split in two halves. */
    private suspend fun squares(n: Int, row: Int, cols: Int, d1: Int, d2: Int, avail: Int): Int {
        if (avail and (avail - 1) == 0) return rowForkJoin(n, row + 1, cols or avail, (d1 or avail) shl 1, (d2 or avail) ushr 1)
        var low = avail // the lower half of the candidate bits
        repeat(Integer.bitCount(avail) / 2) { low = low and (low - 1) }
        low = avail xor low
        val high = avail xor low
        val (a, b) = forkJoin({ squares(n, row, cols, d1, d2, low) }, { squares(n, row, cols, d1, d2, high) })
        return a + b
    }
}

// ---------------------------------------------------------------------------------------------
// Ping-pong between two coroutines (wake-up path)
// ---------------------------------------------------------------------------------------------

object PingPong {
    /**
     * [roundTrips] round trips between two coroutines through two rendezvous channels: the pinger
     * sends i, the ponger answers i + 1. With [fromCaller] false both coroutines run on the
     * executor (a resumed partner is dispatched from a worker); with [fromCaller] true the pinger
     * runs on the caller's `runBlocking` thread and the ponger on the executor, so every round
     * trip wakes a pool thread (park/unpark latency). Returns the checked sum of the answers.
     */
    fun run(ex: ExecutorUnderTest, roundTrips: Int, fromCaller: Boolean): Long {
        val sum = runBlocking {
            if (fromCaller) exchange(this, ex, roundTrips, pongerOnPool = true)
            else withContext(ex.dispatcher) { exchange(this, ex, roundTrips, pongerOnPool = false) }
        }
        val expected = roundTrips.toLong() * (roundTrips + 1) / 2
        if (sum != expected) throw WrongResult("ping-pong of $roundTrips: sum $sum, expected $expected")
        return sum
    }

    private suspend fun exchange(scope: CoroutineScope, ex: ExecutorUnderTest, n: Int, pongerOnPool: Boolean): Long {
        val ping = Channel<Int>(Channel.RENDEZVOUS)
        val pong = Channel<Int>(Channel.RENDEZVOUS)
        val body: suspend CoroutineScope.() -> Unit = { repeat(n) { pong.send(ping.receive() + 1) } }
        val ponger: Job = if (pongerOnPool) scope.launch(ex.dispatcher, block = body) else scope.launch(block = body)
        var sum = 0L
        for (i in 0 until n) {
            ping.send(i)
            sum += pong.receive()
        }
        ponger.join()
        return sum
    }
}

// ---------------------------------------------------------------------------------------------
// yield-heavy fairness
// ---------------------------------------------------------------------------------------------

object YieldStorm {
    /**
     * [coroutines] coroutines on the executor, each calling `yield()` [yields] times. Checks
     * that every yield returned. All coroutines first wait for a common start signal (they
     * start `UNDISPATCHED`, so each is parked on it as soon as it is launched), so a coroutine
     * launched early does not get a head start over one launched late. Returns a fairness figure: when the first coroutine finishes, the least progress any
     * coroutine has made, as a fraction of [yields] (about 1.0 = round-robin; 0.0 = some
     * coroutine has not got past its first yield). The figure reads plain ints written by other
     * threads: it is an indication, not a checked result.
     */
    fun run(ex: ExecutorUnderTest, coroutines: Int = 1_000, yields: Int = 100): Double {
        val progress = IntArray(coroutines)
        val firstDone = AtomicBoolean(false)
        var minAtFirst = -1
        runBlocking {
            withContext(ex.dispatcher) {
                val go = CompletableDeferred<Unit>()
                for (c in 0 until coroutines) {
                    launch(start = CoroutineStart.UNDISPATCHED) {
                        go.await()
                        for (y in 0 until yields) {
                            yield()
                            progress[c]++
                        }
                        if (firstDone.compareAndSet(false, true)) minAtFirst = progress.min()
                    }
                }
                go.complete(Unit)
            }
        }
        val total = progress.sumOf { it.toLong() }
        if (total != coroutines.toLong() * yields) throw WrongResult("yield storm: $total yields returned, expected ${coroutines.toLong() * yields}")
        return minAtFirst.toDouble() / yields
    }
}

// ---------------------------------------------------------------------------------------------
// Allocation per dispatched Runnable
// ---------------------------------------------------------------------------------------------

/**
 * Dispatches one preallocated no-op `Runnable` [batch] times from the calling thread and waits
 * for all to run, without allocating: the last task unparks the caller, which parks until the
 * counter reaches zero. Whatever is allocated during [run] is the executor's own cost (its task
 * wrappers, queue nodes, ...). Meant for JMH `-prof gc` (`gc.alloc.rate.norm` per operation
 * with `@OperationsPerInvocation(batch)` = bytes per dispatch).
 */
class DispatchDrain(private val executor: Executor, val batch: Int) {
    private val remaining = AtomicInteger()
    @Volatile private var waiter: Thread? = null
    private val task = Runnable {
        val r = remaining.decrementAndGet()
        if (r == 0) LockSupport.unpark(waiter)
    }

    fun run() {
        if (remaining.get() != 0) throw WrongResult("dispatch batch of $batch: a task ran more than once")
        waiter = Thread.currentThread()
        remaining.set(batch)
        val ex = executor
        for (i in 0 until batch) ex.execute(task)
        val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_LIMIT_SECONDS)
        while (true) {
            val r = remaining.get()
            if (r == 0) return
            if (r < 0) throw WrongResult("dispatch batch of $batch: a task ran more than once")
            if (System.nanoTime() > deadline) throw WrongResult("dispatch batch of $batch: $r tasks not run within $WAIT_LIMIT_SECONDS s")
            LockSupport.parkNanos(this, 10_000_000L)
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Busy CPU work of a fixed amount (affinity, fair-queue and blocking-mix benchmarks)
// ---------------------------------------------------------------------------------------------

/**
 * A fixed amount of CPU work, the same on every executor: `iterations` xorshift64 steps, each
 * depending on the last, so the time is the same whatever thread runs them (about 1.9 ns a
 * step on the 2-core reference machine: [ITERATIONS_PER_MICRO] steps are about 1 us). Counted
 * in steps rather than timed with `System.nanoTime`, so a preempted task still does all its
 * work. The result is returned and the loop cannot be dropped by the JIT.
 */
object BusyWork {
    /** Steps in about one microsecond on the reference machine (measured: 1.9 ns a step). */
    const val ITERATIONS_PER_MICRO = 530

    @Volatile private var sink = 0L

    /** [iterations] steps from [seed]; never 0 (xorshift keeps a non-zero state non-zero). */
    fun spin(iterations: Int, seed: Long): Long {
        var x = seed or 1L
        for (i in 0 until iterations) {
            x = x xor (x shl 13)
            x = x xor (x ushr 7)
            x = x xor (x shl 17)
        }
        if (x == 0L) sink = x // never true; the JIT cannot know
        return x
    }
}
