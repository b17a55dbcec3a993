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
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeout
import kotlinx.coroutines.yield
import java.lang.management.ManagementFactory
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
// One task on the pool submits N no-op tasks through the pool's executor (per-pool speed)
// ---------------------------------------------------------------------------------------------

/**
 * One task running on the pool submits [count] no-op Runnables to the same [executor] (so they
 * go onto that worker's own queue and are stolen by the others); each decrements a shared
 * counter, and the one that reaches zero stops the clock. The time is taken inside the pool,
 * from the start of the submitting task to the end of the last task, so the wake-up of the
 * pool by the outside submission is not part of it. [run] returns nanoseconds per task.
 *
 * Used by the report's pool-instance spread (several pools in one JVM, each timed on its own)
 * and by `InPoolSubmitBenchmark`. The tasks are preallocated.
 */
class InPoolSubmit(private val executor: Executor, val count: Int = 10_000) {
    private val remaining = AtomicInteger()
    @Volatile private var started = 0L
    @Volatile private var ended = 0L
    @Volatile private var done = CountDownLatch(0)
    private val child = Runnable {
        val r = remaining.decrementAndGet()
        if (r == 0) {
            ended = System.nanoTime()
            done.countDown()
        }
    }
    private val parent = Runnable {
        started = System.nanoTime()
        val ex = executor
        for (i in 0 until count) ex.execute(child)
    }

    /** One burst; nanoseconds per task, from the submitting task's start to the last task's end. */
    fun run(): Double {
        val latch = CountDownLatch(1)
        done = latch
        remaining.set(count)
        executor.execute(parent)
        if (!latch.await(WAIT_LIMIT_SECONDS, TimeUnit.SECONDS)) {
            throw WrongResult("in-pool submit: only ${count - remaining.get()} of $count tasks ran within $WAIT_LIMIT_SECONDS s")
        }
        if (remaining.get() != 0) throw WrongResult("in-pool submit: a task ran more than once (remaining = ${remaining.get()})")
        return (ended - started).toDouble() / count
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

    /** fib([n]) with `ForkedTask`: fork fib(n-1), compute fib(n-2) in place, join the fork. */
    internal fun fibForked(pool: StealingDispatcher, n: Int): Int {
        if (n < 2) return n
        val left = pool.fork { fibForked(pool, n - 1) }
        val right = fibForked(pool, n - 2)
        return left.join() + right
    }

    /** fib([n]) as `RecursiveTask`: fork fib(n-1), compute fib(n-2) in place, join. */
    internal class FibTask(private val n: Int) : RecursiveTask<Int>() {
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
    /** The array being sorted (the Java fork/join forms in JavaForkJoin.kt sort it too). */
    internal val work = IntArray(size)
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

    /** Merges the sorted ranges `lo until mid` and `mid until hi` of [work]. */
    internal fun merge(lo: Int, mid: Int, hi: Int) {
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

// ---------------------------------------------------------------------------------------------
// Timers: withTimeout per call, a storm of delays, a flood of Java schedule()
// ---------------------------------------------------------------------------------------------

/** The value at [fraction] (0.99 = p99) of [values] (nearest rank; sorts [values] in place). */
fun percentile(values: LongArray, fraction: Double): Long {
    require(values.isNotEmpty()) { "no values" }
    values.sort()
    val rank = Math.ceil(fraction * values.size).toInt().coerceIn(1, values.size)
    return values[rank - 1]
}

/**
 * `withTimeout` around a small CPU step, the common server pattern: [calls] calls in all, split
 * over [coroutines] coroutines on the executor, each call `withTimeout(10 s) { [STEP] BusyWork
 * steps }` (about 0.1 us). The timeout never fires: every call registers a timer and disposes of
 * it. On `stealing` the timer goes into the worker's own heap; on `Dispatchers.Default` (and
 * `fjp` on JDK 17) into kotlinx's `DefaultExecutor` heap; on `fjp` on JDK 25 into the pool's
 * `schedule`. Returns the number of calls that returned, checked.
 */
object WithTimeoutCalls {
    const val TIMEOUT_MILLIS = 10_000L

    /** BusyWork steps inside each call (about 0.1 us on the reference machine). */
    const val STEP = 50

    /**
     * With [timeout] false, the control: `coroutineScope { same step }` instead of `withTimeout`,
     * a scope coroutine of the same kind but no timer, so the difference between the two is what
     * the timer (and `withTimeout`'s own handler) costs on that executor.
     */
    fun run(ex: ExecutorUnderTest, calls: Int, coroutines: Int, timeout: Boolean = true): Long {
        require(coroutines in 1..calls) { "coroutines must be in 1..$calls, was $coroutines" }
        val done = java.util.concurrent.atomic.AtomicLong()
        runBlocking {
            withContext(ex.dispatcher) {
                for (c in 0 until coroutines) {
                    // The first calls % coroutines coroutines take one call more.
                    val mine = calls / coroutines + if (c < calls % coroutines) 1 else 0
                    launch {
                        var x = c + 1L
                        if (timeout) {
                            for (i in 0 until mine) x = withTimeout(TIMEOUT_MILLIS) { BusyWork.spin(STEP, x) }
                        } else {
                            for (i in 0 until mine) x = coroutineScope { BusyWork.spin(STEP, x) }
                        }
                        if (x == 0L) throw WrongResult("withTimeout: the busy step returned 0")
                        done.addAndGet(mine.toLong())
                    }
                }
            }
        }
        val n = done.get()
        if (n != calls.toLong()) throw WrongResult("withTimeout: $n calls returned, expected $calls")
        return n
    }
}

/**
 * [coroutines] coroutines on the executor, each doing [delaysEach] `delay`s of 1-10 ms
 * (pseudo-random, fixed seed: the same delays on every executor). Every delay's lateness (time
 * actually slept minus the time asked for) is recorded; a delay that returns early is a wrong
 * result. [run] returns wall time, process CPU time (all threads of the JVM: the pool, kotlinx's
 * timer thread if used, GC, the driver) and lateness percentiles.
 *
 * The coroutines are launched from one coroutine on the executor, so the first ones are already
 * sleeping while the last ones are launched; 1M delays within about 0.1 s overload two cores, so
 * lateness here is mostly queueing behind other resumptions, for every executor alike.
 */
class DelayStorm(val coroutines: Int = 100_000, val delaysEach: Int = 10) {
    class Result(val wallNanos: Long, val cpuNanos: Long, val p50LatenessNanos: Long, val p99LatenessNanos: Long, val maxLatenessNanos: Long)

    private val delays = IntArray(coroutines * delaysEach).also { a ->
        val rnd = java.util.SplittableRandom(7)
        for (i in a.indices) a[i] = 1 + rnd.nextInt(10)
    }
    private val lateness = LongArray(delays.size)

    fun run(ex: ExecutorUnderTest): Result {
        val os = ManagementFactory.getOperatingSystemMXBean() as com.sun.management.OperatingSystemMXBean
        lateness.fill(Long.MIN_VALUE)
        val each = delaysEach
        val cpu0 = os.processCpuTime
        val t0 = System.nanoTime()
        runBlocking {
            withContext(ex.dispatcher) {
                for (c in 0 until coroutines) {
                    launch {
                        val base = c * each
                        for (i in base until base + each) {
                            val d = delays[i]
                            val start = System.nanoTime()
                            delay(d.toLong())
                            lateness[i] = System.nanoTime() - start - d * 1_000_000L
                        }
                    }
                }
            }
        }
        val wall = System.nanoTime() - t0
        val cpu = os.processCpuTime - cpu0
        val missing = lateness.count { it == Long.MIN_VALUE }
        if (missing != 0) throw WrongResult("delay storm: $missing of ${lateness.size} delays not recorded")
        val early = lateness.count { it < 0 }
        if (early != 0) throw WrongResult("delay storm: $early delays returned early (by up to ${-lateness.min()} ns)")
        val sorted = lateness.copyOf()
        val p50 = percentile(sorted, 0.50)
        val p99 = percentile(sorted, 0.99)
        return Result(wall, cpu, p50, p99, sorted.last())
    }
}

/**
 * [count] Java `schedule(task, d, MILLISECONDS)` calls with d pseudo-random in 0..[maxDelayMillis]
 * (fixed seed), submitted by the calling thread, outside the pool; then a wait until all have
 * run. Each task records its lateness (when it ran minus when it was due: the submit time plus
 * its delay) and counts one completion (a task run twice is a wrong result, as is one run
 * early). The tasks are preallocated; the executor's own future per call is its cost.
 * Executors: ours (`pool.executor`), `ScheduledThreadPoolExecutor`, `ForkJoinPool` on JDK 25.
 */
class ScheduleFlood(val count: Int = 1_000_000, val maxDelayMillis: Int = 10) {
    class Result(val submitNanos: Long, val totalNanos: Long, val p50LatenessNanos: Long, val p99LatenessNanos: Long)

    private val delayMillis = IntArray(count).also { a ->
        val rnd = java.util.SplittableRandom(11)
        for (i in a.indices) a[i] = rnd.nextInt(maxDelayMillis + 1)
    }
    private val due = LongArray(count)
    private val lateness = LongArray(count)
    @Volatile private var completion = Completion(0)
    private val tasks = Array(count) { i ->
        Runnable {
            lateness[i] = System.nanoTime() - due[i]
            completion.complete()
        }
    }

    fun run(ex: ExecutorUnderTest): Result {
        val scheduler = ex.scheduler ?: throw IllegalArgumentException("${ex.id} is not a ScheduledExecutorService on this JDK")
        val c = Completion(count)
        completion = c
        val t0 = System.nanoTime()
        for (i in 0 until count) {
            val d = delayMillis[i]
            due[i] = System.nanoTime() + d * 1_000_000L
            scheduler.schedule(tasks[i], d.toLong(), TimeUnit.MILLISECONDS)
        }
        val t1 = System.nanoTime()
        c.await("schedule flood of $count")
        val t2 = System.nanoTime()
        val early = lateness.count { it < 0 }
        if (early != 0) throw WrongResult("schedule flood: $early tasks ran before they were due")
        val sorted = lateness.copyOf()
        return Result(t1 - t0, t2 - t0, percentile(sorted, 0.50), percentile(sorted, 0.99))
    }
}
