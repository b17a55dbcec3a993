package dev.stealing.project

import dev.stealing.StealingDispatcher
import dev.stealing.StealingMetrics
import dev.stealing.StealingOptions
import dev.stealing.awaitInline
import dev.stealing.blocking
import dev.stealing.forkJoin
import dev.stealing.forkJoinAll
import dev.stealing.testsupport.eventually
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.string.shouldStartWith
import io.micrometer.core.instrument.Tags
import io.micrometer.core.instrument.simple.SimpleMeterRegistry
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeout
import java.io.File
import java.nio.file.Files
import java.nio.file.Path
import java.util.concurrent.TimeUnit
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds

// Every Kotlin snippet of README.md and of the docs it sends readers to (docs/java.md,
// docs/observability.md, docs/options.md), verbatim between the `// README:` markers, so they
// cannot drift from the API. (The Java snippets are samples/.../ReadmeJava.java,
// QuickStart.java and JavaFirst.java, run by the build.)

// README: quick-start
suspend fun fib(n: Int): Int = if (n < 2) n else {
    val (a, b) = forkJoin({ fib(n - 1) }, { fib(n - 2) }) // the second half is offered to idle workers;
    a + b                                                 // if none took it, it ran right here, as a call
}

fun main() = runBlocking {
    println(withContext(StealingDispatcher) { fib(25) })               // the shared pool: 75025
    StealingDispatcher(parallelism = 4, name = "compute").use { pool -> // an isolated pool
        println(withContext(pool) { (1..1_000).map { async { it.toLong() } }.awaitAll().sum() })
    }                                                                  // close(): runs what was queued, joins the threads
}
// README: end

// README: await-inline
suspend fun fibInline(n: Int): Int = if (n < 2) n else coroutineScope {
    val left = async { fibInline(n - 1) }
    fibInline(n - 2) + left.awaitInline() // still queued on this worker? then it runs right here
}
// README: end

// README: affinity
class Accounts(private val pool: StealingDispatcher, size: Int) {
    private val balances = LongArray(size) // no lock: each account is only touched by one thread

    suspend fun deposit(account: Int, amount: Long) =
        withContext(pool.affinity(account)) { balances[account] += amount }

    suspend fun balance(account: Int): Long = withContext(pool.affinity(account)) { balances[account] }
}
// README: end

// README: blocking
suspend fun loadConfig(path: Path): String = blocking { Files.readString(path) } // another thread may run meanwhile
// README: end

class ReadmeSpec : FunSpec({
    test("every kotlin and java code block of README.md (and of docs/java.md, observability.md, options.md) is one of the snippets compiled and run here") {
        fun blocksOf(path: String) = Regex("```(kotlin|java)\n(.*?)```", RegexOption.DOT_MATCHES_ALL)
            .findAll(File(path).readText()).map { it.groupValues[2].trimIndent().trim() }.toList()
        val sources = File("src/test/kotlin/dev/stealing/project/ReadmeSpec.kt").readText() +
            File("../samples/src/main/java/dev/stealing/samples/ReadmeJava.java").readText() +
            File("../samples/src/main/java/dev/stealing/samples/QuickStart.java").readText() +
            File("../samples/src/main/java/dev/stealing/samples/JavaFirst.java").readText()
        val snippets = Regex("// README: [a-z-]+\n(.*?)\n[ \t]*// README: end", RegexOption.DOT_MATCHES_ALL)
            .findAll(sources).map { it.groupValues[1].trimIndent().trim() }.toSet()
        (blocksOf("../README.md").size >= 9) shouldBe true
        for (doc in listOf("../README.md", "../docs/java.md", "../docs/observability.md", "../docs/options.md")) {
            withClue("$doc has a code block that is none of the snippets compiled and run") {
                blocksOf(doc).filter { it !in snippets } shouldBe emptyList()
            }
        }
    }

    test("the Quick start's first screen gives the two commands, the demo and the tests, and the CI script runs them as written") {
        val readme = File("../README.md").readLines()
        val start = readme.indexOf("```sh")
        withClue("README.md has no sh block") { (start >= 0) shouldBe true }
        withClue("the two commands should be on the README's first screen (its first 30 lines)") { (start < 30) shouldBe true }
        val commands = readme.drop(start + 1).takeWhile { it != "```" }
        // From the root, in the reactor: nothing installed into ~/.m2 first (exec:java skips every
        // module but samples, whose default main class is the demo).
        commands shouldBe listOf("mvn -B -ntp -q -pl samples -am compile exec:java", "mvn -B -ntp verify")
        File("../samples/pom.xml").readText() shouldContain "<exec.mainClass>dev.stealing.samples.MainDemoKt</exec.mainClass>"
        val ci = File("../.ci/run").readText()
        withClue(".ci/run should run the README's sh block itself, not a copy of it") {
            ci shouldContain "awk '/^```sh$/ { inside = 1; next } inside && /^```$/ { exit } inside' README.md"
            ci shouldContain "bash -c \"\$command\""
        }
    }

    test("the quick start runs") {
        main()
        runBlocking { withContext(StealingDispatcher) { fib(20) to fibInline(20) } } shouldBe (6765 to 6765)
    }

    test("forkJoin and forkJoinAll") {
        val files = listOf(File("../README.md"), File("../CHANGELOG.md"), File("pom.xml"))
        runBlocking {
            // README: forkjoin
            suspend fun sumOfSquares(a: LongArray, lo: Int = 0, hi: Int = a.size): Long {
                if (hi - lo <= 16_384) return (lo until hi).sumOf { a[it] * a[it] } // small enough: a plain loop
                val mid = (lo + hi) ushr 1
                val (left, right) = forkJoin({ sumOfSquares(a, lo, mid) }, { sumOfSquares(a, mid, hi) })
                return left + right
            }

            val sizes = withContext(StealingDispatcher) { forkJoinAll(files.map { f -> suspend { f.length() } }) }
            // README: end
            sizes shouldBe files.map { it.length() }
            val a = LongArray(100_000) { it.toLong() }
            withContext(StealingDispatcher) { sumOfSquares(a) } shouldBe a.sumOf { it * it }
        }
    }

    test("shared pool and isolated pools") {
        runBlocking {
            // README: shared
            val squares = withContext(StealingDispatcher) { (1..100).map { async { it * it } }.awaitAll().sum() }
            // README: end
            squares shouldBe 338_350
            // README: isolated
            val total = StealingDispatcher(parallelism = 4, name = "compute").use { pool ->
                withContext(pool) { (1..1_000).map { async { it.toLong() } }.awaitAll().sum() }
            } // close(): stops intake, runs what was queued, joins the threads
            // README: end
            total shouldBe 500_500L
            withContext(StealingDispatcher) { fib(20) } shouldBe 6765
        }
    }

    test("affinity") {
        StealingDispatcher(parallelism = 2, name = "bank").use { pool ->
            val accounts = Accounts(pool, 100)
            runBlocking {
                coroutineScope { repeat(10_000) { i -> launch(pool) { accounts.deposit(i % 100, 1) } } }
                (0 until 100).sumOf { accounts.balance(it) } shouldBe 10_000L
            }
        }
    }

    test("fair queues") {
        StealingDispatcher(parallelism = 2, name = "server").use { pool ->
            val results = java.util.concurrent.ConcurrentLinkedQueue<String>()
            runBlocking {
                // README: fair
                val reports = pool.fairQueue("reports")                 // a big batch
                val clicks = pool.fairQueue("clicks", weight = 3)       // 3x the share while both have work
                coroutineScope {
                    repeat(10_000) { launch(reports) { results += "report $it" } }
                    repeat(100) { launch(clicks) { results += "click $it" } } // served at once, not after the reports
                }
                reports.close(); clicks.close()                         // they leave the rotation once drained
                // README: end
            }
            results.size shouldBe 10_100
        }
    }

    test("blocking, options and stats") {
        val file = Files.createTempFile("readme", ".conf")
        try {
            Files.writeString(file, "threads=4")
            // README: options
            val pool = StealingDispatcher(
                parallelism = 4,
                name = "compute",
                options = StealingOptions(daemon = false, maxThreads = 64, keepAlive = 30.seconds),
            )
            // README: end
            pool.use {
                runBlocking { withContext(pool) { loadConfig(file) } } shouldBe "threads=4"
                // README: stats
                println(pool.stats())   // StealingStats(name=compute, state=RUNNING, parallelism=4, threads=1, ...)
                println(pool)           // compute[parallelism = 4, threads = 1, queued = 0]
                // README: end
                pool.stats().blockedThreads shouldBe 0 // the blocking region is over
                pool.stats().toString() shouldStartWith "StealingStats(name=compute"
                pool.toString() shouldStartWith "compute[parallelism = 4"
                val registry = SimpleMeterRegistry()
                // README: metrics
                StealingMetrics(pool, Tags.of("service", "search")).bindTo(registry)
                val waiting = registry.get("executor.queued").tag("name", "compute").gauge().value() // tasks queued in the pool
                // README: end
                waiting shouldBe 0.0
                val completed = registry.get("executor.completed").tags("name", "compute", "service", "search").functionCounter()
                eventually(10_000) { completed.count() == pool.stats().executed.toDouble() } shouldBe true
            }
        } finally {
            Files.deleteIfExists(file)
        }
    }

    test("timers") {
        val beats = java.util.concurrent.atomic.AtomicInteger()
        // README: timers
        val answer = StealingDispatcher(parallelism = 2, name = "timers").use { pool ->
            val heartbeat = pool.executor.scheduleAtFixedRate({ beats.incrementAndGet() }, 0, 100, TimeUnit.MILLISECONDS)
            val reply = runBlocking(pool) {
                withTimeout(1.seconds) { delay(10.milliseconds); "on time" } // both timers live on the pool's workers
            }
            heartbeat.cancel(false) // removed at once (periodic tasks also stop at close())
            reply
        }
        // README: end
        answer shouldBe "on time"
        (beats.get() >= 1) shouldBe true
    }
})
