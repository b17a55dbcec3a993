package dev.stealing.benchmarks.jmh

import dev.stealing.StealingDispatcher
import dev.stealing.benchmarks.ExecutorUnderTest
import dev.stealing.benchmarks.WrongResult
import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.sync.Mutex
import kotlinx.coroutines.sync.withLock
import kotlinx.coroutines.withContext
import kotlinx.coroutines.yield
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
import java.util.concurrent.TimeUnit

/**
 * Keyed state without locks: [KEYS] counters, [PER_KEY] increments each, every increment its
 * own coroutine step (one dispatch), the increments of one key in flight on several coroutines
 * at once, so they must be serialised somehow. Variants (`-p variant=...`):
 *
 * - `affinity`: ours, every increment dispatched through `pool.affinity(key)`: all of a key's
 *   increments run on the one worker that serves the key, one at a time, so the counters are
 *   plain `LongArray` slots, no lock, no atomic;
 * - `mutex`: `Dispatchers.Default`, a kotlinx `Mutex` per key around the increment (an
 *   increment that finds its key locked suspends and is resumed by the unlock);
 * - `limited`: `Dispatchers.Default`, one `Dispatchers.Default.limitedParallelism(1)` view per
 *   key (kotlinx's serial view), no lock;
 * - `pool-mutex` (a control, not one of the three compared): our pool, plain dispatch, a
 *   `Mutex` per key, which separates the cost of the pool from the cost of the lock.
 *
 * Two shapes of the same logical work (`-p shape=...`):
 *
 * - `launch` (message passing): [KEYS] producer coroutines on the variant's pool (ours or
 *   Default), producer `p` launching its `i`-th one-increment coroutine on key `(p + i) % KEYS`
 *   without waiting: [KEYS] x [PER_KEY] launches. Each launch is a structured child of its
 *   producer, so kotlinx's `Job` bookkeeping (attach, and detach from whatever thread the child
 *   completes on) is part of every variant's cost;
 * - `yield` (resident coroutines): [WRITERS_PER_KEY] coroutines per key started on the key's
 *   dispatcher, each looping `increment; yield()` [PER_KEY] / [WRITERS_PER_KEY] times: every
 *   increment is one re-dispatch of an existing coroutine.
 *
 * Counters are padded ([STRIDE] longs apart) so that two keys never share a cache line. Every
 * operation checks each counter ([PER_KEY]) and returns the total. Score: time per increment
 * (one operation = [KEYS] x [PER_KEY] increments).
 *
 * With 16 keys on a 2-worker pool the `affinity` variant's keys are split between the workers
 * by hash, not necessarily 8/8; the trial set-up prints the split.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 5, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
open class AffinityCounterBenchmark {
    @Param("affinity", "mutex", "limited", "pool-mutex")
    lateinit var variant: String

    @Param("launch", "yield")
    lateinit var shape: String

    private var pool: StealingDispatcher? = null
    private lateinit var shared: CoroutineDispatcher
    private lateinit var keyed: Array<CoroutineDispatcher>
    private var mutexes: Array<Mutex>? = null
    private val counters = LongArray(KEYS * STRIDE)

    @Setup(Level.Trial)
    fun setUp() {
        require(shape == "launch" || shape == "yield") { "shape must be launch or yield, was '$shape'" }
        val cores = ExecutorUnderTest.CORES
        when (variant) {
            "affinity" -> {
                val p = StealingDispatcher(cores, "bench-affinity")
                pool = p
                shared = p
                keyed = Array(KEYS) { p.affinity(it) }
                printKeySplit(p)
            }
            "pool-mutex" -> {
                val p = StealingDispatcher(cores, "bench-affinity")
                pool = p
                shared = p
                keyed = Array(KEYS) { p }
                mutexes = Array(KEYS) { Mutex() }
            }
            "mutex" -> {
                shared = Dispatchers.Default
                keyed = Array(KEYS) { Dispatchers.Default }
                mutexes = Array(KEYS) { Mutex() }
            }
            "limited" -> {
                shared = Dispatchers.Default
                keyed = Array(KEYS) { Dispatchers.Default.limitedParallelism(1) }
            }
            else -> throw IllegalArgumentException("variant must be affinity, mutex, limited or pool-mutex, was '$variant'")
        }
    }

    /** Which worker thread serves each key (one probe coroutine per key). */
    private fun printKeySplit(p: StealingDispatcher) {
        val threadOf = Array(KEYS) { k -> runBlocking { withContext(p.affinity(k)) { Thread.currentThread().name } } }
        val split = threadOf.indices.groupBy({ threadOf[it] }, { it }).toSortedMap()
        println("keys per worker: " + split.entries.joinToString { (t, ks) -> "$t: ${ks.size} $ks" })
    }

    @TearDown(Level.Trial)
    fun tearDown() {
        pool?.close()
    }

    @Benchmark
    @OperationsPerInvocation(KEYS * PER_KEY)
    fun increment(): Long {
        val c = counters
        c.fill(0L)
        runBlocking {
            withContext(shared) {
                if (shape == "launch") launchEach(c) else yieldEach(c)
            }
        }
        var total = 0L
        for (k in 0 until KEYS) {
            val n = c[k * STRIDE]
            if (n != PER_KEY.toLong()) throw WrongResult("$variant/$shape: key $k counted $n increments, expected $PER_KEY")
            total += n
        }
        return total
    }

    /** `shape=launch`: [KEYS] producers, each launching [PER_KEY] one-increment coroutines over all keys. */
    private fun CoroutineScope.launchEach(c: LongArray) {
        val keyed = keyed
        val mutexes = mutexes
        for (p in 0 until KEYS) {
            launch {
                for (i in 0 until PER_KEY) {
                    val k = (p + i) % KEYS
                    if (mutexes == null) {
                        launch(keyed[k]) { c[k * STRIDE]++ }
                    } else {
                        val m = mutexes[k]
                        launch(keyed[k]) { m.withLock { c[k * STRIDE]++ } }
                    }
                }
            }
        }
    }

    /** `shape=yield`: [WRITERS_PER_KEY] coroutines per key, each incrementing and yielding [PER_KEY] / [WRITERS_PER_KEY] times. */
    private fun CoroutineScope.yieldEach(c: LongArray) {
        val mutexes = mutexes
        for (k in 0 until KEYS) {
            repeat(WRITERS_PER_KEY) {
                if (mutexes == null) {
                    launch(keyed[k]) {
                        repeat(PER_KEY / WRITERS_PER_KEY) {
                            c[k * STRIDE]++
                            yield()
                        }
                    }
                } else {
                    val m = mutexes[k]
                    launch(keyed[k]) {
                        repeat(PER_KEY / WRITERS_PER_KEY) {
                            m.withLock { c[k * STRIDE]++ }
                            yield()
                        }
                    }
                }
            }
        }
    }

    companion object {
        const val KEYS = 16
        const val PER_KEY = 10_000

        /** `shape=yield`: coroutines sharing one key's counter. */
        const val WRITERS_PER_KEY = 4

        /** Longs between two counters: 128 bytes, so no two keys share a cache line (or an adjacent-line prefetch pair). */
        const val STRIDE = 16
    }
}
