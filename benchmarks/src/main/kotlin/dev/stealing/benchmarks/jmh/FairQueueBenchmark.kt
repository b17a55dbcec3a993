package dev.stealing.benchmarks.jmh

import dev.stealing.FairQueueDispatcher
import dev.stealing.benchmarks.BusyWork
import dev.stealing.benchmarks.Completion
import dev.stealing.benchmarks.ExecutorUnderTest
import dev.stealing.benchmarks.NoopFlood
import dev.stealing.benchmarks.WAIT_LIMIT_SECONDS
import dev.stealing.benchmarks.WrongResult
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.cancel
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import org.openjdk.jmh.annotations.Benchmark
import org.openjdk.jmh.annotations.BenchmarkMode
import org.openjdk.jmh.annotations.Fork
import org.openjdk.jmh.annotations.Level
import org.openjdk.jmh.annotations.Measurement
import org.openjdk.jmh.annotations.Mode
import org.openjdk.jmh.annotations.OperationsPerInvocation
import org.openjdk.jmh.annotations.OutputTimeUnit
import org.openjdk.jmh.annotations.Param
import org.openjdk.jmh.annotations.Scope
import org.openjdk.jmh.annotations.Setup
import org.openjdk.jmh.annotations.State
import org.openjdk.jmh.annotations.TearDown
import org.openjdk.jmh.annotations.Warmup
import java.util.concurrent.CountDownLatch
import java.util.concurrent.Executor
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger

/**
 * Fair queues ([dev.stealing.StealingDispatcher.fairQueue]), three measurements:
 *
 * **`bCompletion`** (state [AB], `-p variant=...`): the A/B scenario. Batch A, [A_TASKS] tasks
 * of about 1.5 us of busy work each ([BusyWork], [SPIN_ITERATIONS] steps), is submitted from
 * the benchmark thread in a per-invocation set-up, which then waits until [A_STARTED] of them
 * have completed, so A is really running. The measured call submits batch B, [B_TASKS] tasks
 * of the same size, from the same thread and waits for the last of them: the score is B's
 * completion time, from B's first submission to the benchmark thread seeing B's last task
 * end (it includes that thread's wake-up). The per-invocation tear-down waits for A to drain
 * and checks that every A and B task ran exactly once. Variants:
 * - `fair`: our pool, A on one fair queue and B on another (weight 1 each): from B's arrival
 *   the workers alternate between the two queues, so B needs about `2 x B_TASKS` task times;
 * - `plain`: the same pool's `executor` (outside submissions go to its FIFO global queue), A and
 *   B through it: B waits behind what is left of A;
 * - `default`: `Dispatchers.Default.asExecutor()` (FIFO global queue for outside submissions);
 * - `tpe`: `Executors.newFixedThreadPool(cores)` (one FIFO `LinkedBlockingQueue`).
 *
 * How much of A is left when B arrives differs a little between executors (A's submission
 * overlaps its execution); every iteration's tear-down prints the mean, and B's completion
 * time as timed inside the tasks (first submission to last task end, without the wake-up), as
 * a cross-check.
 *
 * **`overhead`** (state [Flood], `-p path=...`): the cost of a fair queue against plain
 * dispatch: [FLOOD_TASKS] no-op `Runnable`s submitted from one outside thread while the
 * workers drain them ([NoopFlood], overlapped), through `pool.fairQueue().executor`
 * (`path=fair`, the only fair queue of the pool) or `pool.executor` (`path=plain`). Score: time
 * per task, queue + drain.
 *
 * **`plainWithIdleQueues`** (state [IdleQueues], `-p idleQueues=...`, `-p dispatch=...`): what
 * open but idle fair queues cost everybody else. [PLAIN_TASKS] no-op tasks dispatched to the
 * pool, plain (not through a fair queue), on a pool that also has `idleQueues` open fair queues
 * that never get any work. A worker that runs out of work looks at the fair queues on every
 * search round and again before it parks, so this is the price of that look:
 * - `dispatch=fanout`: a coroutine running on the pool launches [PLAIN_TASKS] children and
 *   waits for them. They go onto its worker's deque; the other worker steals them one at a
 *   time and looks at the fair queues between two steals. When that look probed every queue,
 *   10,000 idle queues made this 5x slower (404 -> 1,998 ns per launch, 2 vCPUs, 1 fork x 5
 *   iterations);
 * - `dispatch=flood`: one preallocated `Runnable` through the plain `executor` from an outside
 *   thread, drained while queued ([NoopFlood], as `overhead`): throughput, where workers
 *   rarely run out of work.
 *
 * The target is the same score with 0 and with 10,000 idle queues (within 1.1x). Score: time
 * per task.
 */
@BenchmarkMode(Mode.AverageTime)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
open class FairQueueBenchmark {
    /** The A/B scenario's executors and batches, one per trial; A is started and drained per invocation. */
    @State(Scope.Benchmark)
    open class AB {
        @Param("fair", "plain", "default", "tpe")
        lateinit var variant: String

        lateinit var subject: ExecutorUnderTest
        private var queueA: FairQueueDispatcher? = null
        private var queueB: FairQueueDispatcher? = null
        lateinit var scenario: ABScenario

        @Setup(Level.Trial)
        fun open() {
            val id = when (variant) {
                "fair", "plain" -> "stealing"
                "default", "tpe" -> variant
                else -> throw IllegalArgumentException("variant must be fair, plain, default or tpe, was '$variant'")
            }
            subject = ExecutorUnderTest.create(id)
            if (variant == "fair") {
                val pool = subject.stealing!!
                val a = pool.fairQueue("batch-a").also { queueA = it }
                val b = pool.fairQueue("batch-b").also { queueB = it }
                scenario = ABScenario(a.executor, b.executor)
            } else {
                scenario = ABScenario(subject.executor, subject.executor)
            }
        }

        @Setup(Level.Iteration)
        fun resetStats() = scenario.resetStats()

        @TearDown(Level.Iteration)
        fun printStats() = println(scenario.summary())

        @Setup(Level.Invocation)
        fun startA() = scenario.startA()

        @TearDown(Level.Invocation)
        fun drainA() = scenario.awaitAll()

        @TearDown(Level.Trial)
        fun close() {
            queueA?.close()
            queueB?.close()
            subject.close()
        }
    }

    /** The no-op flood through a fair queue or the plain executor of one pool. */
    @State(Scope.Benchmark)
    open class Flood {
        @Param("plain", "fair")
        lateinit var path: String

        lateinit var subject: ExecutorUnderTest
        private var queue: FairQueueDispatcher? = null
        lateinit var flood: NoopFlood

        @Setup(Level.Trial)
        fun open() {
            require(path == "plain" || path == "fair") { "path must be plain or fair, was '$path'" }
            subject = ExecutorUnderTest.create("stealing")
            val executor = if (path == "fair") subject.stealing!!.fairQueue("flood").also { queue = it }.executor else subject.executor
            flood = NoopFlood(executor, FLOOD_TASKS)
        }

        @TearDown(Level.Trial)
        fun close() {
            queue?.close()
            subject.close()
        }
    }

    /** A plain no-op flood on a pool with [idleQueues] open fair queues that never get work. */
    @State(Scope.Benchmark)
    open class IdleQueues {
        @Param("0", "10000")
        var idleQueues: Int = 0

        @Param("fanout", "flood")
        lateinit var dispatch: String

        lateinit var subject: ExecutorUnderTest
        private val queues = ArrayList<FairQueueDispatcher>()
        lateinit var flood: NoopFlood
        lateinit var scope: CoroutineScope

        @Setup(Level.Trial)
        fun open() {
            require(idleQueues >= 0) { "idleQueues must be >= 0, was $idleQueues" }
            require(dispatch == "fanout" || dispatch == "flood") { "dispatch must be fanout or flood, was '$dispatch'" }
            subject = ExecutorUnderTest.create("stealing")
            val pool = subject.stealing!!
            repeat(idleQueues) { queues += pool.fairQueue("idle-$it") }
            flood = NoopFlood(subject.executor, PLAIN_TASKS)
            scope = CoroutineScope(subject.dispatcher)
        }

        /** `dispatch=fanout`: a coroutine on the pool launches [PLAIN_TASKS] children and waits for them. */
        fun launchFromWithin() {
            val done = Completion(PLAIN_TASKS)
            runBlocking { scope.launch { coroutineScope { repeat(PLAIN_TASKS) { launch { done.complete() } } } }.join() }
            done.await("$PLAIN_TASKS launches from within, beside $idleQueues idle fair queues")
        }

        @TearDown(Level.Trial)
        fun close() {
            scope.cancel()
            for (q in queues) q.close()
            subject.close()
        }
    }

    /** B's completion time behind a running A (see the class KDoc). */
    @Benchmark
    @OutputTimeUnit(TimeUnit.MILLISECONDS)
    @Measurement(iterations = 5, time = 2)
    fun bCompletion(s: AB): Long = s.scenario.runB()

    /** Queue + drain of [FLOOD_TASKS] no-op tasks from one outside thread, per task. */
    @Benchmark
    @OutputTimeUnit(TimeUnit.NANOSECONDS)
    @OperationsPerInvocation(FLOOD_TASKS)
    fun overhead(s: Flood) {
        val f = s.flood
        f.arm(separated = false)
        f.enqueue()
        f.awaitDrain()
    }

    /** Dispatch + run of [PLAIN_TASKS] no-op tasks, plain (not fair), beside idle fair queues; per task. */
    @Benchmark
    @OutputTimeUnit(TimeUnit.NANOSECONDS)
    @OperationsPerInvocation(PLAIN_TASKS)
    fun plainWithIdleQueues(s: IdleQueues) {
        if (s.dispatch == "fanout") return s.launchFromWithin()
        val f = s.flood
        f.arm(separated = false)
        f.enqueue()
        f.awaitDrain()
    }

    companion object {
        const val A_TASKS = 100_000
        const val B_TASKS = 1_000

        /** A's completions before B is submitted. */
        const val A_STARTED = 1_000

        /** About 1.5 us of busy work per A or B task. */
        const val SPIN_ITERATIONS = 800
        const val FLOOD_TASKS = 100_000

        /** Tasks per invocation of `plainWithIdleQueues` (the 20k launches of the idle-queue report). */
        const val PLAIN_TASKS = 20_000
    }
}

/**
 * The A/B fairness scenario of [FairQueueBenchmark.bCompletion]: [startA] submits batch A
 * through [executorA] and returns once [FairQueueBenchmark.A_STARTED] A tasks have completed;
 * [runB] submits batch B through [executorB] and returns when all of B has run; [awaitAll]
 * waits for A to drain and checks both batches. Task objects are preallocated.
 */
class ABScenario(private val executorA: Executor, private val executorB: Executor) {
    private val aTasks = FairQueueBenchmark.A_TASKS
    private val bTasks = FairQueueBenchmark.B_TASKS
    private val spin = FairQueueBenchmark.SPIN_ITERATIONS

    private val aDone = AtomicInteger()
    private val bDone = AtomicInteger()
    @Volatile private var aStarted = CountDownLatch(0)
    @Volatile private var aFinished = CountDownLatch(0)
    @Volatile private var bFinished = CountDownLatch(0)
    @Volatile private var bEnd = 0L

    // Statistics over one iteration, printed by summary().
    private var runs = 0
    private var aLeftSum = 0L
    private val bInternalNanos = ArrayList<Long>()

    private val aTask = Runnable {
        BusyWork.spin(spin, aDone.get().toLong())
        val d = aDone.incrementAndGet()
        if (d == FairQueueBenchmark.A_STARTED) aStarted.countDown()
        if (d == aTasks) aFinished.countDown()
    }

    private val bTask = Runnable {
        BusyWork.spin(spin, bDone.get().toLong())
        val d = bDone.incrementAndGet()
        if (d == bTasks) {
            bEnd = System.nanoTime()
            bFinished.countDown()
        }
    }

    fun startA() {
        aDone.set(0)
        bDone.set(0)
        aStarted = CountDownLatch(1)
        aFinished = CountDownLatch(1)
        bFinished = CountDownLatch(1)
        val ex = executorA
        for (i in 0 until aTasks) ex.execute(aTask)
        if (!aStarted.await(WAIT_LIMIT_SECONDS, TimeUnit.SECONDS)) {
            throw WrongResult("A/B: fewer than ${FairQueueBenchmark.A_STARTED} A tasks ran within $WAIT_LIMIT_SECONDS s")
        }
    }

    /** Submits B, waits for it; returns B's completion time as timed by its last task (ns). */
    fun runB(): Long {
        val t0 = System.nanoTime()
        val aLeft = aTasks - aDone.get()
        val ex = executorB
        for (i in 0 until bTasks) ex.execute(bTask)
        if (!bFinished.await(WAIT_LIMIT_SECONDS, TimeUnit.SECONDS)) {
            throw WrongResult("A/B: only ${bDone.get()} of $bTasks B tasks ran within $WAIT_LIMIT_SECONDS s")
        }
        val nanos = bEnd - t0
        runs++
        aLeftSum += aLeft
        bInternalNanos += nanos
        return nanos
    }

    fun awaitAll() {
        if (!aFinished.await(WAIT_LIMIT_SECONDS, TimeUnit.SECONDS)) {
            throw WrongResult("A/B: only ${aDone.get()} of $aTasks A tasks ran within $WAIT_LIMIT_SECONDS s")
        }
        Thread.sleep(1) // a task that ran twice would show up now
        if (aDone.get() != aTasks) throw WrongResult("A/B: ${aDone.get()} A task runs, expected $aTasks")
        if (bDone.get() != bTasks) throw WrongResult("A/B: ${bDone.get()} B task runs, expected $bTasks")
    }

    fun resetStats() {
        runs = 0
        aLeftSum = 0L
        bInternalNanos.clear()
    }

    /** Runs, mean A tasks left at B's arrival, B's completion time as timed by the tasks (median, mean, max). */
    fun summary(): String {
        if (runs == 0) return "A/B: no runs"
        val sorted = bInternalNanos.sorted()
        return "A/B, %d runs: A left at B's arrival %.0f of %d (mean); B by the tasks: median %.3f ms, mean %.3f ms, max %.3f ms".format(
            runs, aLeftSum.toDouble() / runs, aTasks, sorted[sorted.size / 2] / 1e6, sorted.average() / 1e6, sorted.last() / 1e6,
        )
    }
}
