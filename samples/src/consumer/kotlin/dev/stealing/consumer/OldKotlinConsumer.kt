package dev.stealing.consumer

import dev.stealing.StealingDispatcher
import dev.stealing.awaitInline
import dev.stealing.blocking
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.launch
import kotlinx.coroutines.withContext

// Compiled, not run, by samples/pom.xml (execution old-kotlin-consumer) with
// -language-version/-api-version ${kotlin.consumer.version} (2.1): the library's main API,
// used as a Kotlin consumer on the oldest supported compiler would use it. Keep it to the
// stable core of the API, so API work elsewhere rarely needs to touch it.

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
