package dev.stealing.benchmarks.jmh

import dev.stealing.benchmarks.ExecutorUnderTest
import org.openjdk.jmh.annotations.Level
import org.openjdk.jmh.annotations.Setup
import org.openjdk.jmh.annotations.TearDown

/**
 * Base of the benchmarks parameterised by the executor under test: one [ExecutorUnderTest] per
 * trial, created before the first iteration and closed after the last. Each subclass declares
 * [executor] with its own `@Param` list and does its extra set-up in [afterOpen].
 *
 * The pools have as many threads as there are available processors, or the system property
 * `bench.parallelism` (`-jvmArgsAppend -Dbench.parallelism=1`; `Dispatchers.Default` keeps its
 * own), or what a subclass's `@Param` [parallelism] says.
 */
abstract class OnExecutor {
    /** The executor id (`stealing`, `default`, `fjp`, ...): a `@Param` in each subclass. */
    abstract var executor: String

    /**
     * Threads of the pools this trial creates: the available processors, or the system property
     * `bench.parallelism`; a subclass that measures several overrides it with a `@Param`.
     */
    open var parallelism: Int = Integer.getInteger("bench.parallelism", ExecutorUnderTest.CORES)

    /** The executor of this trial. */
    lateinit var subject: ExecutorUnderTest

    @Setup(Level.Trial)
    fun openExecutor() {
        subject = ExecutorUnderTest.create(executor, parallelism)
        afterOpen()
    }

    /** Trial set-up that needs [subject]: validation of the other parameters, workload objects. */
    protected open fun afterOpen() {}

    @TearDown(Level.Trial)
    fun closeExecutor() = subject.close()
}
