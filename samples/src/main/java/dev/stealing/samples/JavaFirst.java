package dev.stealing.samples;

import dev.stealing.StealingDispatcher;

import java.util.Arrays;
import java.util.Comparator;
import java.util.concurrent.CompletableFuture;

/**
 * The README's Java section, verbatim between the {@code // README:} markers: fork/join, a
 * reduction, a sort of objects and a {@code CompletableFuture} chain on one pool. Run by the build
 * through {@link ReadmeJava} (which checks what it prints), so the README cannot drift from the API.
 *
 * <p>Run: {@code mvn -q -pl samples -am compile exec:java -Dexec.mainClass=dev.stealing.samples.JavaFirst}
 */
public final class JavaFirst {
    private JavaFirst() {
    }

    // README: java-first
    record Order(String customer, long cents) { }

    static long fib(StealingDispatcher pool, int n) {
        if (n < 2) return n;
        return pool.forkJoin(() -> fib(pool, n - 1), () -> fib(pool, n - 2), Long::sum); // no Future per fork
    }

    public static void main(String[] args) {
        try (StealingDispatcher pool = new StealingDispatcher(4, "java")) {
            System.out.println(fib(pool, 30));                                       // 832040

            long sumOfSquares = pool.parallelReduceToLong(0, 1_000_000, 0L, i -> (long) i * i, Long::sum);
            System.out.println(sumOfSquares);                                        // 333332833333500000

            Order[] orders = { new Order("b", 300), new Order("a", 300), new Order("c", 100) };
            pool.parallelSort(orders, Comparator.comparingLong(Order::cents));      // stable: b stays before a
            System.out.println(Arrays.toString(orders));

            String total = CompletableFuture.supplyAsync(() -> 20, pool.getExecutor())
                .thenApplyAsync(x -> x + 1, pool.getExecutor())
                .thenComposeAsync(x -> CompletableFuture.supplyAsync(() -> x * 2, pool.getExecutor()), pool.getExecutor())
                .thenApply(x -> "answer " + x)
                .join();
            System.out.println(total);                                               // answer 42
        }
    }
    // README: end
}
