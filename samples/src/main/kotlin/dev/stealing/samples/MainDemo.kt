package dev.stealing.samples

import dev.stealing.StealingDispatcher
import dev.stealing.awaitInline
import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.asCoroutineDispatcher
import kotlinx.coroutines.async
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import java.util.concurrent.ForkJoinPool
import kotlin.system.exitProcess

/**
 * The main demo: a divide-and-conquer job (recursive Fibonacci with one `async` per node and no
 * cut-off, the classic stress for a scheduler) on [StealingDispatcher], on
 * [Dispatchers.Default] and on a `ForkJoinPool` used as a dispatcher, alternating them, and the
 * median times of each.
 *
 * Run: `mvn -q -pl samples exec:java`
 */
fun main() {
    val n = 27
    val expected = fibSequential(n)
    val rounds = 7
    val times = linkedMapOf<String, MutableList<Double>>()
    val fjp = ForkJoinPool(Runtime.getRuntime().availableProcessors()).asCoroutineDispatcher()
    val contenders: List<Triple<String, CoroutineDispatcher, Boolean>> = listOf(
        Triple("Dispatchers.Default, await", Dispatchers.Default, false),
        Triple("ForkJoinPool dispatcher, await", fjp, false),
        Triple("StealingDispatcher, await", StealingDispatcher, false),
        Triple("StealingDispatcher, awaitInline", StealingDispatcher, true),
    )
    println("fib($n) with one async per node, ${Runtime.getRuntime().availableProcessors()} cores, $rounds rounds after warm-up")
    repeat(rounds + 3) { round ->
        for ((name, dispatcher, inline) in contenders) {
            val start = System.nanoTime()
            val result = runBlocking { withContext(dispatcher) { fib(n, inline) } }
            val ms = (System.nanoTime() - start) / 1e6
            if (result != expected) {
                System.err.println("$name computed $result, expected $expected")
                exitProcess(1)
            }
            if (round >= 3) times.getOrPut(name) { ArrayList() } += ms
        }
    }
    fjp.close()
    val base = times.getValue("Dispatchers.Default, await").median()
    for ((name, list) in times) {
        val m = list.median()
        println("%-34s median %7.1f ms   %.2f x Default".format(name, m, m / base))
    }
}

/** fib(n) as a tree of coroutines: one `async` per node, no sequential cut-off. */
suspend fun fib(n: Int, inline: Boolean): Int = if (n < 2) n else coroutineScope {
    val left = async { fib(n - 1, inline) }
    val right = fib(n - 2, inline)
    (if (inline) left.awaitInline() else left.await()) + right
}

private fun fibSequential(n: Int): Int = if (n < 2) n else fibSequential(n - 1) + fibSequential(n - 2)

private fun List<Double>.median(): Double = sorted().let { it[it.size / 2] }
