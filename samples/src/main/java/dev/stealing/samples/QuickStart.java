package dev.stealing.samples;

import dev.stealing.ForkedTask;
import dev.stealing.StealingDispatcher;

/**
 * The Java quick start of README.md, verbatim between the {@code // README:} markers; run by the
 * build through {@link ReadmeJava}, so the README cannot drift from the API.
 *
 * <p>Run: {@code mvn -q -pl samples exec:java -Dexec.mainClass=dev.stealing.samples.QuickStart}
 */
public final class QuickStart {
    // README: java-quick-start
    static long fib(StealingDispatcher pool, int n) {
        if (n < 2) return n;
        ForkedTask<Long> left = pool.fork(() -> fib(pool, n - 1)); // on this worker's deque
        return fib(pool, n - 2) + left.join();                      // runs `left` right here unless it was stolen
    }

    public static void main(String[] args) throws Exception {
        try (StealingDispatcher pool = new StealingDispatcher(4, "compute")) {
            System.out.println(pool.fork(() -> fib(pool, 25)).join());        // 75025
            System.out.println(pool.getExecutor().submit(() -> 6 * 7).get()); // 42: a full ExecutorService
        }
    }
    // README: end
}
