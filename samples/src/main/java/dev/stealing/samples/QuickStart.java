package dev.stealing.samples;

import dev.stealing.StealingDispatcher;

/**
 * The Java quick start of README.md, verbatim between the {@code // README:} markers; run by the
 * build through {@link ReadmeJava}, so the README cannot drift from the API.
 *
 * <p>Run: {@code mvn -q -pl samples -am compile exec:java -Dexec.mainClass=dev.stealing.samples.QuickStart}
 */
public final class QuickStart {
    // README: java-quick-start
    static long fib(StealingDispatcher pool, int n) {
        if (n < 2) return n; // the second half is offered to idle workers; if none took it, it runs right here
        return pool.forkJoin(() -> fib(pool, n - 1), () -> fib(pool, n - 2), Long::sum);
    }

    public static void main(String[] args) throws Exception {
        try (StealingDispatcher pool = new StealingDispatcher(4, "compute")) {
            System.out.println(fib(pool, 25));                                 // 75025: on the pool, this thread waits
            System.out.println(pool.getExecutor().submit(() -> 6 * 7).get()); // 42: a full ExecutorService
        }
    }
    // README: end
}
