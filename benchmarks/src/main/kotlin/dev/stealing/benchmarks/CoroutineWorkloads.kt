package dev.stealing.benchmarks

import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.Job
import kotlinx.coroutines.channels.Channel
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import kotlinx.coroutines.yield
import java.util.concurrent.atomic.AtomicBoolean

/*
 * The coroutine switching workloads: coroutines that suspend and are resumed again and again,
 * so that what is timed is the dispatcher's resume path. PingPong passes a value back and forth
 * between two coroutines through rendezvous channels (on the pool, or between the caller and
 * the pool, where every round trip wakes a pool thread); YieldStorm has many coroutines yield
 * in turn and also gives a fairness figure. The message-passing shapes (actors, rings, chains)
 * are in MessagePassing.kt.
 */

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
