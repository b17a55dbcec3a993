package dev.stealing.samples

import dev.stealing.StealingDispatcher
import dev.stealing.awaitInline
import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.Deferred
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import kotlin.system.exitProcess

// Shared by MergeSort, NQueens, UnbalancedTreeSearch and WordFrequency: the executors under
// test, timing with warm-up rounds and medians, the self-check, and a hash.

/** One way of running a sample's parallel code: on [dispatcher], joining children with `awaitInline` or not. */
internal class Contender(val name: String, val dispatcher: CoroutineDispatcher, val inline: Boolean)

/** The contenders every sample compares; the first is the baseline of the "x Default" ratios. */
internal val contenders: List<Contender> = listOf(
    Contender("Dispatchers.Default, await", Dispatchers.Default, inline = false),
    Contender("StealingDispatcher, await", StealingDispatcher, inline = false),
    Contender("StealingDispatcher, awaitInline", StealingDispatcher, inline = true),
)

/** `awaitInline()` when [inline], else plain `await()`. */
internal suspend fun <T> Deferred<T>.awaitWith(inline: Boolean): T = if (inline) awaitInline() else await()

/**
 * Runs [parallel] on every contender (inside `runBlocking { withContext(dispatcher) { ... } }`)
 * and, if given, [sequential] (its name and code) on the calling thread, alternating them round
 * by round: [warmUp] rounds untimed, then [rounds] timed ones. Before every run [reset] restores
 * the input (not timed); after it [check] returns null for a right result or a description of
 * what is wrong, in which case the program exits with status 1. Prints the median, min and max
 * of each and the ratio of the medians to `Dispatchers.Default`.
 */
internal fun <T> compareDispatchers(
    warmUp: Int = 3,
    rounds: Int = 5,
    reset: () -> Unit = {},
    sequential: Pair<String, () -> T>? = null,
    check: (T) -> String?,
    parallel: suspend (inline: Boolean) -> T,
) {
    val runs = ArrayList<Pair<String, () -> T>>()
    for (c in contenders) runs += c.name to { runBlocking { withContext(c.dispatcher) { parallel(c.inline) } } }
    if (sequential != null) runs += sequential
    val times = linkedMapOf<String, MutableList<Double>>()
    val progress = Progress(warmUp + rounds)
    repeat(warmUp + rounds) { round ->
        for ((name, run) in runs) {
            progress.show(round, name)
            reset()
            val start = System.nanoTime()
            val result = run()
            val ms = (System.nanoTime() - start) / 1e6
            check(result)?.let { fail("$name: $it") }
            if (round >= warmUp) times.getOrPut(name) { ArrayList() } += ms
        }
    }
    progress.done()
    val base = times.getValue(contenders.first().name).medianOf()
    for ((name, list) in times) {
        val m = list.medianOf()
        println("%-34s median %8.1f ms   %.2f x Default   (min %.1f, max %.1f)".format(name, m, m / base, list.min(), list.max()))
    }
}

/**
 * How far a sample's rounds have got, on standard error so that its table stays clean: on a
 * terminal one line rewritten in place for every run, in a log one line per round.
 */
internal class Progress(private val rounds: Int) {
    private val terminal = System.console() != null
    private var lastRound = -1
    private var width = 0

    /** Round [round] (from 0) is about to run [what]. */
    fun show(round: Int, what: String) {
        val line = "round ${round + 1} of $rounds: $what"
        if (terminal) {
            System.err.print("\r" + line.padEnd(width))
            width = maxOf(width, line.length)
        } else if (round != lastRound) {
            System.err.println("round ${round + 1} of $rounds")
        }
        lastRound = round
    }

    /** Clears the line on a terminal. */
    fun done() {
        if (terminal) System.err.print("\r" + " ".repeat(width) + "\r")
    }
}

/** "N cores, W warm-up + R timed rounds, executors alternated" for a sample's header line. */
internal fun roundsNote(warmUp: Int = 3, rounds: Int = 5): String =
    "${Runtime.getRuntime().availableProcessors()} cores, $warmUp warm-up + $rounds timed rounds, executors alternated"

/** Prints [message] to stderr and exits with status 1: a sample computed a wrong result. */
internal fun fail(message: String): Nothing {
    System.err.println("WRONG RESULT: $message")
    exitProcess(1)
}

internal fun List<Double>.medianOf(): Double = sorted().let { it[it.size / 2] }

/** The SplitMix64 finalizer: a cheap, well-mixing 64-bit hash (also a seeded generator: hash seed + i * gamma). */
internal fun splitMix64(x: Long): Long {
    var z = x + GOLDEN_GAMMA
    z = (z xor (z ushr 30)) * -0x40a7b892e31b1a47L // 0xbf58476d1ce4e5b9
    z = (z xor (z ushr 27)) * -0x6b2fb644ecceee15L // 0x94d049bb133111eb
    return z xor (z ushr 31)
}

/** 0x9e3779b97f4a7c15, SplitMix64's increment. */
internal const val GOLDEN_GAMMA: Long = -0x61c8864680b583ebL
