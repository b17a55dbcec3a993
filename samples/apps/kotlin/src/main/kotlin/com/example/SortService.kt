package com.example

import dev.stealing.StealingDispatcher
import dev.stealing.awaitInline
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import java.util.SplittableRandom

/**
 * A small sorting service on one StealingDispatcher. Two clients send requests (arrays to
 * sort) all at once: "bulk" 200 small ones, "reports" 3 large ones. Each request hops between
 * dispatchers of the same pool:
 *
 * 1. it runs on its client's fair queue (`pool.fairQueue(client)`): the workers take turns
 *    between the clients' queues, so the backlog of "bulk" waits in its own queue instead of in
 *    front of the requests of "reports"; a small array is sorted right there;
 * 2. a large array is sorted in `withContext(pool)` by a parallel merge sort whose halves are
 *    forked onto the workers' deques (`async`); `awaitInline()` runs a half that no other
 *    worker took right where it waits;
 * 3. `withContext(pool.affinity(client))`: the client's statistics are plain fields, touched
 *    only on the one worker that serves that key, in order: no lock;
 * 4. `withContext(log)`, where `log = pool.limitedParallelism(1)`: one request at a time
 *    appends to a plain list.
 *
 * Run (after `mvn install -DskipTests` of the library): `mvn -q compile exec:java` in this
 * project's folder. `--check` prints nothing unless something is wrong.
 */
fun main(args: Array<String>) {
    val quiet = "--check" in args
    val requests = mapOf("bulk" to 200, "reports" to 3)
    val sizes = mapOf("bulk" to 20_000, "reports" to 1_000_000)

    StealingDispatcher(name = "sort-service").use { pool ->
        val service = SortService(pool, requests.keys)
        val start = System.nanoTime()
        val finishedMs: Map<String, Double> = runBlocking {
            requests.map { (client, count) ->
                val queue = pool.fairQueue(client)              // one fair queue per client
                async(queue) {
                    (0 until count).map { r ->
                        async { service.handle(client, randomInts(sizes.getValue(client), seed = 31L * r + client.length)) }
                    }.awaitAll()
                    queue.close()                              // leaves the rotation once drained
                    client to (System.nanoTime() - start) / 1e6
                }
            }.awaitAll().toMap()
        }

        for ((client, count) in requests) {
            val stats = service.stats.getValue(client)
            check(stats.requests == count) { "$client: ${stats.requests} requests recorded, expected $count" }
            check(stats.threads == 1) { "$client: statistics touched by ${stats.threads} threads" }
        }
        check(service.log.size == requests.values.sum()) { "${service.log.size} log lines" }
        if (!quiet) {
            println("$pool: " + requests.entries.joinToString { (c, n) -> "\"$c\" %d requests of %,d ints".format(n, sizes.getValue(c)) })
            for ((client, ms) in finishedMs) {
                val stats = service.stats.getValue(client)
                println("  %-8s done after %6.1f ms; slowest request %5.1f ms; statistics kept on %s"
                    .format(client, ms, stats.slowestMs, stats.thread?.name))
            }
            println("  log: ${service.log.first()} ... (${service.log.size} lines)")
        }
    } // close(): the queued work runs, then the threads are joined
}

/** Requests of at most this many ints are sorted sequentially, on the client's fair queue. */
const val SMALL = 100_000

/** The requests' shared state, each part behind the dispatcher that protects it. */
class SortService(private val pool: StealingDispatcher, clients: Set<String>) {
    /** Read-only map; each [ClientStats] is only touched under `pool.affinity(client)`. */
    val stats: Map<String, ClientStats> = clients.associateWith { ClientStats() }

    private val logDispatcher = pool.limitedParallelism(1)

    /** Only touched on [logDispatcher]: one coroutine at a time. */
    val log = ArrayList<String>()

    suspend fun handle(client: String, data: IntArray) {
        val start = System.nanoTime()
        val original = data.copyOf()
        if (data.size <= SMALL) {
            data.sort() // small: right here, on the client's fair queue
        } else {
            withContext(pool) { mergeSort(data, IntArray(data.size), 0, data.size) } // large: forked over the pool
        }
        val ms = (System.nanoTime() - start) / 1e6
        check(data.contentEquals(original.also { it.sort() })) { "$client: wrongly sorted" }
        withContext(pool.affinity(client)) { stats.getValue(client).record(ms) }
        withContext(logDispatcher) { log += "$client sorted %,d ints in %.1f ms".format(data.size, ms) }
    }
}

/** A client's figures: plain fields, no lock; all access runs on the worker of `pool.affinity(client)`. */
class ClientStats {
    var requests = 0
    var slowestMs = 0.0
    var thread: Thread? = null
    var threads = 0

    fun record(ms: Double) {
        val current = Thread.currentThread()
        if (thread !== current) { thread = current; threads++ }
        requests++
        slowestMs = maxOf(slowestMs, ms)
    }
}

/** Sorts a[lo, hi) with [scratch] as the merge buffer: the left half forked, the right half here. */
suspend fun mergeSort(a: IntArray, scratch: IntArray, lo: Int, hi: Int) {
    if (hi - lo <= 8_192) {
        a.sort(lo, hi)
        return
    }
    val mid = (lo + hi) ushr 1
    coroutineScope {
        val left = async { mergeSort(a, scratch, lo, mid) } // onto this worker's deque
        mergeSort(a, scratch, mid, hi)
        left.awaitInline() // not taken by another worker? then it runs right here
    }
    System.arraycopy(a, lo, scratch, lo, hi - lo)
    var i = lo
    var j = mid
    var k = lo
    while (i < mid && j < hi) a[k++] = if (scratch[j] < scratch[i]) scratch[j++] else scratch[i++]
    while (i < mid) a[k++] = scratch[i++]
    while (j < hi) a[k++] = scratch[j++]
}

fun randomInts(size: Int, seed: Long): IntArray {
    val random = SplittableRandom(seed)
    return IntArray(size) { random.nextInt() }
}
