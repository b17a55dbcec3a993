package com.example

import dev.stealing.StealingDispatcher
import dev.stealing.awaitInline
import dev.stealing.blocking
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext

// The library used from a project on the oldest supported Kotlin: compiler 2.2.0 and
// kotlin-stdlib 2.2.20 (see pom.xml). Keep it to the stable core of the API, so API work
// elsewhere rarely needs to touch it. `--check` prints nothing unless a result is wrong.

suspend fun fib(n: Int): Int = if (n < 2) n else coroutineScope {
    val left = async { fib(n - 1) }
    fib(n - 2) + left.awaitInline()
}

suspend fun consumer(): Long = StealingDispatcher(parallelism = 2, name = "consumer").use { pool ->
    val fair = pool.fairQueue("batch", weight = 2)
    val total = withContext(pool) { (1..100).map { async { it.toLong() } }.awaitAll().sum() }
    coroutineScope { launch(fair) { blocking { Thread.sleep(1) } } }
    fair.close()
    withContext(pool.affinity("key")) { fib(10) }
    total + withContext(StealingDispatcher) { fib(5) } + pool.stats().parallelism
}

fun main(args: Array<String>) {
    val result = runBlocking { consumer() }
    val stdlib = KotlinVersion.CURRENT
    check(result == 5050L + 5 + 2) { "consumer() returned $result" }
    check(stdlib.isAtLeast(2, 2, 20)) { "running on kotlin-stdlib $stdlib, older than 2.2.20" }
    if ("--check" !in args) println("$result, on kotlin-stdlib $stdlib")
}
