package dev.stealing

import io.kotest.assertions.withClue
import java.util.concurrent.Callable
import java.util.concurrent.ExecutorService
import java.util.concurrent.ForkJoinPool
import java.util.concurrent.ForkJoinTask
import java.util.concurrent.Future
import java.util.concurrent.LinkedBlockingQueue
import java.util.concurrent.ThreadPoolExecutor
import java.util.concurrent.TimeUnit.MILLISECONDS
import java.util.concurrent.TimeUnit.SECONDS

/*
 * What the Executor*Spec files share: a Subject (a pool a scenario runs on), the pools they run
 * on, the JDK's for reference and ours, and onJdkThenOurs, which runs a scenario on both.
 */

/**
 * A pool a scenario runs on: its [executor], how it [fork]s a callable (ForkJoinTask for
 * ForkJoinPool, ForkedTask for ours, plain submit for ThreadPoolExecutor), and a [label] for
 * failure messages.
 */
internal class Subject(
    val label: String,
    val executor: ExecutorService,
    /** A JDK pool, run for reference; false for ours. */
    val reference: Boolean,
    val fork: (Callable<Int>) -> Future<Int>,
)

internal fun threadPool(n: Int): () -> Subject = {
    val ex = ThreadPoolExecutor(n, n, 0L, MILLISECONDS, LinkedBlockingQueue())
    Subject("ThreadPoolExecutor($n) (reference)", ex, reference = true) { c -> ex.submit(c) }
}

internal fun forkJoinPool(n: Int): () -> Subject = {
    val p = ForkJoinPool(n)
    Subject("ForkJoinPool($n) (reference)", p, reference = true) { c -> p.submit(ForkJoinTask.adapt(c)) }
}

internal fun stealing(n: Int, name: String, options: StealingOptions = StealingOptions.DEFAULT): () -> Subject = {
    val d = StealingDispatcher(n, name, options)
    Subject("StealingDispatcher($n, \"$name\")", d.executor, reference = false) { c -> d.fork(c) }
}

/**
 * Runs [scenario] on the JDK's [reference] pool, then on [ours]. Each pool is shut down after its
 * run (shutdownNow, then at most 10 s for termination); failures name the pool.
 */
internal fun onJdkThenOurs(reference: () -> Subject, ours: () -> Subject, scenario: (Subject) -> Unit) {
    for (create in listOf(reference, ours)) {
        val s = create()
        try {
            withClue(s.label) { scenario(s) }
        } catch (e: AssertionError) {
            throw e
        } catch (e: Throwable) {
            throw AssertionError("${s.label}: unexpected $e", e)
        } finally {
            s.executor.shutdownNow()
            s.executor.awaitTermination(10, SECONDS)
        }
    }
}
