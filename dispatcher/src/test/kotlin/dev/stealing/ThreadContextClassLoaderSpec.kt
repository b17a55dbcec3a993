package dev.stealing

import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.types.shouldBeSameInstanceAs
import kotlinx.coroutines.joinAll
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import java.net.URL
import java.net.URLClassLoader
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit.SECONDS
import kotlin.concurrent.thread

/** A loader of its own, told apart by identity: an application's, or a request's that must not leak. */
private fun loader(): ClassLoader = URLClassLoader(arrayOf<URL>(), ThreadContextClassLoaderSpec::class.java.classLoader)

private inline fun <T> withContextClassLoader(loader: ClassLoader, block: () -> T): T {
    val t = Thread.currentThread()
    val before = t.contextClassLoader
    t.contextClassLoader = loader
    try {
        return block()
    } finally {
        t.contextClassLoader = before
    }
}

/** Live threads whose names start with [prefix], with their context class loaders. */
private fun threadsNamed(prefix: String): Map<String, ClassLoader?> =
    Thread.getAllStackTraces().keys.filter { it.name.startsWith(prefix) }.associate { it.name to it.contextClassLoader }

/**
 * The context class loader of the threads a pool starts: the one of the thread that created the
 * pool, whatever thread's submission started them (a pool starts its threads lazily, so a worker
 * would otherwise inherit the loader of some submitter, and keep it alive for as long as it lives).
 */
class ThreadContextClassLoaderSpec : FunSpec({
    test("workers, an extra worker and the monitor get the creator's context class loader, not the loader of the thread that started them") {
        val application = loader()
        val request = loader()
        val pool = withContextClassLoader(application) { StealingDispatcher(2, "tccl-pool") }
        pool.use { d ->
            val seen = ConcurrentHashMap<String, ClassLoader>() // thread -> the loader a task saw there
            fun record() {
                val t = Thread.currentThread()
                seen[t.name] = t.contextClassLoader ?: request // null would fail the identity check below
            }
            val gate = CountDownLatch(1)
            val bothBlocked = CountDownLatch(2)
            var failure: Throwable? = null
            val submitter = thread(name = "submitter-with-a-request-loader") {
                Thread.currentThread().contextClassLoader = request
                try {
                    runBlocking {
                        // The first submissions start both workers from this thread.
                        val blocked = List(2) {
                            launch(d) {
                                record()
                                blocking {
                                    bothBlocked.countDown()
                                    gate.await(20, SECONDS)
                                }
                            }
                        }
                        try {
                            bothBlocked.await(20, SECONDS) shouldBe true
                            launch(d) { record() }.join() // both workers blocked: an extra worker runs it
                        } finally {
                            gate.countDown()
                        }
                        blocked.joinAll()
                    }
                } catch (e: Throwable) {
                    failure = e
                } finally {
                    gate.countDown()
                }
            }
            submitter.join(30_000)
            failure?.let { throw it }
            withClue("tasks ran on $seen") {
                seen.size shouldBe 3
                seen.values.forEach { it shouldBeSameInstanceAs application }
            }
            val threads = threadsNamed("tccl-pool-")
            withClue("the pool's threads: $threads") {
                threads.keys.any { it.endsWith("-monitor") } shouldBe true
                threads.values.forEach { it shouldBeSameInstanceAs application }
            }
        }
    }

    test("the shared pool's threads get the class loader of the library, not the first user's") {
        val request = loader()
        val seen = withContextClassLoader(request) {
            runBlocking { withContext(StealingDispatcher) { Thread.currentThread().contextClassLoader } }
        }
        seen shouldBeSameInstanceAs StealingDispatcher::class.java.classLoader
        threadsNamed("StealingDispatcher.Default-").values.forEach { it shouldBeSameInstanceAs StealingDispatcher::class.java.classLoader }
    }
})
