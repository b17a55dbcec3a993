package dev.stealing.benchmarks

import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.channels.Channel
import kotlinx.coroutines.channels.SendChannel
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import kotlinx.coroutines.yield

/**
 * Message-passing workloads: one coroutine resumes another and then suspends, so the time is
 * spent in hand-offs (a dispatch of the resumed coroutine, and whatever wake-up or queue trip
 * the executor makes of it) rather than in computation. Each runs wholly on the executor
 * (`runBlocking { withContext(dispatcher) { ... } }`), checks its result and returns it.
 *
 * The shapes are those of the message-passing rows in the performance issue of our tracker
 * (an outside suite of coroutine benchmarks); written here from their description:
 * - [awaitChains]: coroutines that each `async` a step and `await` it, over and over;
 * - [sharedStateJobs]: jobs released together that each read a shared array and `yield()`;
 * - [actors]: requester coroutines that send a request to a server actor (which owns an
 *   array it reads for each request) and wait for its reply on their own channel;
 * - [ring]: actors in a cycle passing one message, each doing a little work on it;
 * - [pingPong]: pairs of actors sending a counter back and forth.
 */
object MessagePassing {
    /**
     * [chains] coroutines; each runs [steps] times `value = async { value + 1 }.await()`: an
     * async child dispatched, the parent suspended on it, the child's completion resuming the
     * parent. Returns the sum of the final values (chains x steps).
     */
    fun awaitChains(ex: ExecutorUnderTest, chains: Int, steps: Int): Long {
        val sum = onExecutor(ex) {
            (0 until chains).map {
                async {
                    var value = 0L
                    repeat(steps) {
                        val v = value
                        value = async { v + 1 }.await()
                    }
                    value
                }
            }.awaitAll().sum()
        }
        check(sum, chains.toLong() * steps, "await chains $chains x $steps")
        return sum
    }

    /** The array [sharedStateJobs] reads: 2,048 longs, the same for every run. */
    private val sharedState = LongArray(2_048) { it * 31L + 7 }
    private val sharedSum = sharedState.sum()

    /**
     * [jobs] async jobs, started and released together (a gate they all wait on); each sums
     * the shared array, yields, sums it again and yields again, and returns its total.
     * Checks the grand total; the time is mostly the start, release and collection of the jobs.
     */
    fun sharedStateJobs(ex: ExecutorUnderTest, jobs: Int): Long {
        val total = onExecutor(ex) {
            val gate = CompletableDeferred<Unit>()
            val started = Channel<Unit>(jobs)
            val all = (0 until jobs).map {
                async {
                    started.send(Unit)
                    gate.await()
                    var sum = 0L
                    repeat(2) {
                        for (x in sharedState) sum += x
                        yield()
                    }
                    sum
                }
            }
            repeat(jobs) { started.receive() }
            gate.complete(Unit)
            all.awaitAll().sum()
        }
        check(total, jobs * 2 * sharedSum, "shared-state jobs $jobs")
        return total
    }

    private class Request(val value: Long, val replyTo: SendChannel<Long>)

    /**
     * [servers] actors, each owning a [stateSize]-long array, and [requesters] coroutines that
     * each make [requests] requests: send a value to a server (round-robin from a per-requester
     * start) and wait for the reply on its own channel; a server answers with the value times
     * the sum of its array. Returns the sum of all replies (checked).
     */
    fun actors(ex: ExecutorUnderTest, servers: Int, requesters: Int, requests: Int, stateSize: Int): Long {
        val state = LongArray(stateSize) { (it % 5).toLong() }
        val factor = state.sum()
        val total = onExecutor(ex) {
            val inboxes = List(servers) { Channel<Request>(Channel.BUFFERED) }
            val serverJobs = inboxes.map { inbox ->
                launch {
                    val own = state.copyOf()
                    for (r in inbox) {
                        var s = 0L
                        for (x in own) s += x
                        r.replyTo.send(r.value * s)
                    }
                }
            }
            val sums = (0 until requesters).map { id ->
                async {
                    val replies = Channel<Long>(1)
                    var sum = 0L
                    for (k in 0 until requests) {
                        inboxes[(id + k) % servers].send(Request(k.toLong(), replies))
                        sum += replies.receive()
                    }
                    sum
                }
            }.awaitAll()
            inboxes.forEach { it.close() }
            serverJobs.forEach { it.join() }
            sums.sum()
        }
        check(total, requesters * factor * (requests.toLong() * (requests - 1) / 2), "actors $servers x $requesters")
        return total
    }

    /**
     * [actors] actors in a cycle, each owning a [stateSize]-long array; one message goes round
     * [laps] times, and each actor that receives it folds its array into it and sends it on.
     * Returns the number of hops (checked: actors x laps).
     */
    fun ring(ex: ExecutorUnderTest, actors: Int, laps: Int, stateSize: Int): Long {
        val hops = onExecutor(ex) {
            val inboxes = List(actors) { Channel<Long>(Channel.BUFFERED) }
            val done = CompletableDeferred<Long>()
            val members = (0 until actors).map { i ->
                launch {
                    val own = LongArray(stateSize) { (it + i).toLong() }
                    val next = inboxes[(i + 1) % actors]
                    var seen = 0L
                    for (m in inboxes[i]) {
                        var v = m
                        for (x in own) v = v * 31 + x
                        seen++
                        if (i == actors - 1 && seen == laps.toLong()) {
                            done.complete(seen * actors)
                            break
                        }
                        next.send(v)
                    }
                }
            }
            inboxes[0].send(1L)
            val n = done.await()
            inboxes.forEach { it.close() }
            members.forEach { it.join() }
            n
        }
        check(hops, actors.toLong() * laps, "ring of $actors x $laps")
        return hops
    }

    /**
     * [pairs] pairs of actors; in each, the pinger sends a counter and waits for the ponger's
     * answer (the counter plus one), [messages] times, on capacity-1 channels. Returns the sum of
     * the answers over all pairs (checked).
     */
    fun pingPong(ex: ExecutorUnderTest, pairs: Int, messages: Int): Long {
        val total = onExecutor(ex) {
            (0 until pairs).map {
                async {
                    val toPonger = Channel<Int>(1)
                    val toPinger = Channel<Int>(1)
                    val ponger = launch { for (m in toPonger) toPinger.send(m + 1) }
                    var sum = 0L
                    for (k in 0 until messages) {
                        toPonger.send(k)
                        sum += toPinger.receive()
                    }
                    toPonger.close()
                    ponger.join()
                    sum
                }
            }.awaitAll().sum()
        }
        check(total, pairs * (messages.toLong() * (messages + 1) / 2), "ping-pong $pairs pairs")
        return total
    }

    private fun <T> onExecutor(ex: ExecutorUnderTest, block: suspend CoroutineScope.() -> T): T =
        runBlocking { withContext(ex.dispatcher) { coroutineScope { block() } } }

    private fun check(actual: Long, expected: Long, what: String) {
        if (actual != expected) throw WrongResult("$what: got $actual, expected $expected")
    }
}

/** The named shapes of [MessagePassingBenchmark] and of the report's message-passing rows. */
object MessagePassingShapes {
    val ALL = listOf("chain-1", "chain-8", "jobs-1", "jobs-8", "actor-1x1", "actor-1xN", "actor-NxN", "ring-1", "ring-1024", "pingpong-1", "pingpong-N")

    private val cores = ExecutorUnderTest.CORES

    fun run(shape: String, ex: ExecutorUnderTest): Long = when (shape) {
        "chain-1" -> MessagePassing.awaitChains(ex, 1, 1_000)
        "chain-8" -> MessagePassing.awaitChains(ex, 8, 1_000)
        "jobs-1" -> MessagePassing.sharedStateJobs(ex, 1)
        "jobs-8" -> MessagePassing.sharedStateJobs(ex, 8)
        "actor-1x1" -> MessagePassing.actors(ex, 1, 1, 2_000, 1_024)
        "actor-1xN" -> MessagePassing.actors(ex, 1, cores, 2_000, 1_024)
        "actor-NxN" -> MessagePassing.actors(ex, cores, cores, 2_000, 1_024)
        "ring-1" -> MessagePassing.ring(ex, cores, 1_000, 1)
        "ring-1024" -> MessagePassing.ring(ex, cores, 1_000, 1_024)
        "pingpong-1" -> MessagePassing.pingPong(ex, 1, 10_000)
        "pingpong-N" -> MessagePassing.pingPong(ex, cores, 10_000)
        else -> throw IllegalArgumentException("shape must be one of $ALL, was '$shape'")
    }
}
