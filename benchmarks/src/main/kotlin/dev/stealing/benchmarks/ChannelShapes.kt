package dev.stealing.benchmarks

import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.ExperimentalCoroutinesApi
import kotlinx.coroutines.channels.Channel
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.sync.Semaphore
import kotlinx.coroutines.sync.withPermit
import org.openjdk.jmh.infra.Blackhole
import java.util.concurrent.ThreadLocalRandom
import kotlin.math.ln

/**
 * Channels and semaphores between coroutines: the shapes of kotlinx.coroutines' own
 * `SemaphoreBenchmark` and `ChannelProducerConsumerBenchmark`, written here from their
 * description, with a little random CPU work between the operations, so that what differs
 * between dispatchers is how a suspended sender or receiver is resumed and who runs it.
 *
 * | shape | what |
 * |---|---|
 * | `chsem-{1,8}-{p,1000}` | a buffered channel of capacity 1 or 8 used as a semaphore by `p` (the dispatcher's parallelism) or 1,000 coroutines: each loops `send(Unit)` (acquire), [SEMAPHORE_INSIDE] units of work, `receive()` (release), [SEMAPHORE_OUTSIDE] units |
 * | `sem-{1,8}-{p,1000}` | the same loop with kotlinx's `Semaphore(1 or 8)` and `withPermit` |
 * | `pc-rdv-{p,1000}` | producers and consumers on a rendezvous channel, half the coroutines each (at least one of each); every send and receive followed by [PC_WORK_MIN]-[PC_WORK_MAX] units |
 * | `pc-buf-{p,1000}` | the same on a buffered channel of capacity [BUFFER] |
 *
 * A unit of work is one of JMH's `Blackhole.consumeCPU` tokens; the semaphore's amounts are
 * drawn from a geometric distribution with the given mean, as kotlinx's benchmark does. One run
 * makes [OPS] acquisitions or passes [OPS] messages (or fewer, when asked), split evenly over the
 * coroutines. As in kotlinx's benchmarks, the calling thread launches every coroutine onto the
 * dispatcher (`launch(dispatcher)` inside `runBlocking`), so each starts as a submission from
 * outside, and joins them all. Launched from inside the dispatcher (`withContext`) instead, the
 * ratios to Default were the same within their spread (a first comparison at p = 2, `--jvms 3`).
 * [run] returns the time of one run in nanoseconds per operation and checks that every
 * coroutine finished its share (and, for producers and consumers, the sum of the messages).
 * 100,000 operations make a run of 15-100 ms; with 20,000 (3-20 ms) a row's ratio to Default
 * moved by up to 40% between two reports of the same code.
 *
 * The dispatchers are those of [dispatcherOf]: for `default`, `Dispatchers.Default
 * .limitedParallelism(p)` (a view of at most `p` of Default's threads), the others with `p`
 * threads of their own.
 */
object ChannelShapes {
    val ALL: List<String> = listOf("chsem", "sem").flatMap { kind ->
        listOf(1, 8).flatMap { permits -> listOf("p", "1000").map { n -> "$kind-$permits-$n" } }
    } + listOf("rdv", "buf").flatMap { kind -> listOf("p", "1000").map { n -> "pc-$kind-$n" } }

    /** The executors every shape runs on: ours and its three peers. */
    val EXECUTORS = listOf("stealing", "default", "fjp", "tpe")

    /** The parallelisms the report and the JMH benchmark measure. */
    val PARALLELISMS = listOf(1, 2, 4)

    /** Acquisitions, or messages, in one run (unless [run] is given fewer). */
    const val OPS = 100_000
    const val SEMAPHORE_INSIDE = 50
    const val SEMAPHORE_OUTSIDE = 50
    const val PC_WORK_MIN = 50L
    const val PC_WORK_MAX = 100L
    const val BUFFER = 64

    private val limitedDefaults = HashMap<Int, CoroutineDispatcher>()

    /**
     * The dispatcher [ex] stands for in these shapes: `Dispatchers.Default.limitedParallelism(p)`
     * for `default` (one view per parallelism, kept), else [ExecutorUnderTest.dispatcher].
     */
    @OptIn(ExperimentalCoroutinesApi::class)
    fun dispatcherOf(ex: ExecutorUnderTest): CoroutineDispatcher =
        if (ex.id != "default") ex.dispatcher
        else synchronized(limitedDefaults) { limitedDefaults.getOrPut(ex.parallelism) { Dispatchers.Default.limitedParallelism(ex.parallelism) } }

    /** The size of [shape] on a dispatcher of parallelism [p]: its coroutines, or for producers and consumers their total before rounding ([launched]). */
    fun coroutines(shape: String, p: Int): Int = if (shape.endsWith("-1000")) 1_000 else p

    /** Coroutines [shape] launches on a dispatcher of parallelism [p]: producers and consumers in equal numbers, at least one each. */
    fun launched(shape: String, p: Int): Int {
        val n = coroutines(shape, p)
        return if (shape.startsWith("pc-")) 2 * producers(n) else n
    }

    /** Producers (and as many consumers) of a producer/consumer shape of [coroutines] coroutines. */
    private fun producers(coroutines: Int): Int = maxOf(1, coroutines / 2)

    /**
     * Runs [shape] once on [ex], with [ops] acquisitions or messages in all (at least one per
     * coroutine); nanoseconds per operation.
     */
    fun run(shape: String, ex: ExecutorUnderTest, ops: Int = OPS): Double {
        require(shape in ALL) { "shape must be one of $ALL, was '$shape'" }
        require(ops >= 1_000) { "ops must be >= 1000, was $ops" }
        val d = dispatcherOf(ex)
        val n = coroutines(shape, ex.parallelism)
        val parts = shape.split('-')
        val t0 = System.nanoTime()
        val done = when (parts[0]) {
            "chsem" -> channelAsSemaphore(d, parts[1].toInt(), n, ops)
            "sem" -> semaphore(d, parts[1].toInt(), n, ops)
            else -> producersConsumers(d, if (parts[1] == "rdv") Channel.RENDEZVOUS else BUFFER, n, ops)
        }
        return (System.nanoTime() - t0).toDouble() / done
    }

    private fun channelAsSemaphore(d: CoroutineDispatcher, permits: Int, coroutines: Int, ops: Int): Int {
        val each = ops / coroutines
        val done = runBlocking {
            val permitsChannel = Channel<Unit>(permits)
            val counts = IntArray(coroutines)
            val jobs = List(coroutines) { c ->
                launch(d) {
                    repeat(each) {
                        permitsChannel.send(Unit)
                        work(SEMAPHORE_INSIDE)
                        permitsChannel.receive()
                        work(SEMAPHORE_OUTSIDE)
                        counts[c]++
                    }
                }
            }
            jobs.forEach { it.join() }
            counts.sum()
        }
        expect(done.toLong(), each.toLong() * coroutines, "channel as semaphore, acquisitions")
        return done
    }

    private fun semaphore(d: CoroutineDispatcher, permits: Int, coroutines: Int, ops: Int): Int {
        val each = ops / coroutines
        val done = runBlocking {
            val semaphore = Semaphore(permits)
            val counts = IntArray(coroutines)
            val jobs = List(coroutines) { c ->
                launch(d) {
                    repeat(each) {
                        semaphore.withPermit { work(SEMAPHORE_INSIDE) }
                        work(SEMAPHORE_OUTSIDE)
                        counts[c]++
                    }
                }
            }
            jobs.forEach { it.join() }
            counts.sum()
        }
        expect(done.toLong(), each.toLong() * coroutines, "semaphore, acquisitions")
        return done
    }

    private fun producersConsumers(d: CoroutineDispatcher, capacity: Int, coroutines: Int, ops: Int): Int {
        val producers = producers(coroutines)
        val consumers = producers
        val each = ops / producers
        val total = runBlocking {
            val channel = Channel<Int>(capacity)
            val sums = LongArray(consumers)
            val producerJobs = List(producers) {
                launch(d) {
                    repeat(each) { k ->
                        channel.send(k)
                        work(PC_WORK_MIN, PC_WORK_MAX)
                    }
                }
            }
            val consumerJobs = List(consumers) { c ->
                launch(d) {
                    repeat(each) {
                        sums[c] += channel.receive()
                        work(PC_WORK_MIN, PC_WORK_MAX)
                    }
                }
            }
            producerJobs.forEach { it.join() }
            consumerJobs.forEach { it.join() }
            sums.sum()
        }
        val expected = producers.toLong() * (each.toLong() * (each - 1) / 2)
        expect(total, expected, "producers/consumers, sum of the messages")
        return producers * each
    }

    private fun expect(actual: Long, expected: Long, what: String) {
        if (actual != expected) throw WrongResult("$what: got $actual, expected $expected")
    }

    /** About [mean] units of CPU work, drawn from a geometric distribution. */
    private fun work(mean: Int) {
        val u = ThreadLocalRandom.current().nextDouble()
        Blackhole.consumeCPU((ln(1.0 - u) / ln(1.0 - 1.0 / mean)).toLong())
    }

    /** Between [min] and [max] units of CPU work, uniformly. */
    private fun work(min: Long, max: Long) {
        Blackhole.consumeCPU(ThreadLocalRandom.current().nextLong(min, max))
    }
}
