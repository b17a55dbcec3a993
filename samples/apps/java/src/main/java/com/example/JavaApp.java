package com.example;

import dev.stealing.ForkedTask;
import dev.stealing.StealingDispatcher;
import dev.stealing.StealingExecutorService;

import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * A Java 17 program using StealingDispatcher the ways a Java team would: fork/join with
 * {@link ForkedTask}, the pool's {@code ExecutorService} with {@code submit}, {@code invokeAll}
 * and {@code CompletableFuture.supplyAsync(..., executor)}, then both ways of ending a pool
 * ({@code close()} by try-with-resources, and {@code shutdown()} + {@code awaitTermination}).
 * No cast anywhere: the executor's {@code submit} and {@code invokeAll} return
 * {@code ForkedTask}s.
 *
 * <p>Run (after {@code mvn install -DskipTests} of the library): {@code mvn -q compile exec:java}
 * in this project's folder. {@code --check} prints nothing unless something is wrong.
 */
public final class JavaApp {
    public static void main(String[] args) throws Exception {
        boolean quiet = Arrays.asList(args).contains("--check");
        int[] data = new Random(42).ints(2_000_000, 0, 1_000).toArray();
        long expectedSum = Arrays.stream(data).asLongStream().sum();

        try (StealingDispatcher pool = new StealingDispatcher(Runtime.getRuntime().availableProcessors(), "java-app")) {
            // Fork/join: the left half is forked onto this worker's deque, join() runs it right
            // here unless another worker took it.
            long sum = pool.fork(() -> sum(pool, data, 0, data.length)).join();
            check(sum == expectedSum, "fork/join sum " + sum);

            StealingExecutorService executor = pool.getExecutor();

            // submit(): a ForkedTask<T>, so join() needs no cast.
            String worker = executor.submit(() -> Thread.currentThread().getName()).join();
            check(worker.startsWith("java-app-worker-"), "ran on " + worker);

            // invokeAll(): one task per quarter, each counting the values below 500.
            int n = data.length;
            List<Callable<Integer>> quarters = List.of(
                () -> below(data, 0, n / 4, 500), () -> below(data, n / 4, n / 2, 500),
                () -> below(data, n / 2, 3 * n / 4, 500), () -> below(data, 3 * n / 4, n, 500));
            int belowHalf = 0;
            for (ForkedTask<Integer> quarter : executor.invokeAll(quarters)) belowHalf += quarter.join();
            check(belowHalf == below(data, 0, n, 500), "invokeAll counted " + belowHalf);

            // CompletableFuture on the pool: a sorted copy, then its median.
            CompletableFuture<Integer> median = CompletableFuture
                .supplyAsync(() -> { int[] copy = data.clone(); Arrays.parallelSort(copy); return copy; }, executor)
                .thenApplyAsync(sorted -> sorted[sorted.length / 2], executor);
            int m = median.get(10, TimeUnit.SECONDS);
            check(m >= 490 && m <= 510, "median " + m);

            if (!quiet) {
                System.out.printf("fork/join sum %,d; submit ran on %s; invokeAll: %,d values below 500; CompletableFuture: median %d%n",
                    sum, worker, belowHalf, m);
                System.out.println(pool); // name, parallelism, threads, queued; pool.stats() has every counter
            }
        } // close(): no new tasks, the accepted ones run, the threads are joined

        // Where an ExecutorService is all the code knows of: shutdown() and awaitTermination().
        ExecutorService service = new StealingDispatcher(2, "service").getExecutor();
        Future<Integer> answer = service.submit(() -> 6 * 7);
        service.shutdown(); // stops intake; what was accepted still runs
        check(service.awaitTermination(10, TimeUnit.SECONDS) && answer.get() == 42, "shutdown");
        if (!quiet) System.out.println("service: " + answer.get() + ", terminated " + service.isTerminated());
    }

    /** The sum of a[lo, hi): the left half forked, the right half summed here, then joined. */
    static long sum(StealingDispatcher pool, int[] a, int lo, int hi) {
        if (hi - lo <= 10_000) {
            long s = 0;
            for (int i = lo; i < hi; i++) s += a[i];
            return s;
        }
        int mid = (lo + hi) >>> 1;
        ForkedTask<Long> left = pool.fork(() -> sum(pool, a, lo, mid));
        long right = sum(pool, a, mid, hi);
        return left.join() + right;
    }

    static int below(int[] a, int lo, int hi, int limit) {
        int count = 0;
        for (int i = lo; i < hi; i++) if (a[i] < limit) count++;
        return count;
    }

    static void check(boolean ok, String what) {
        if (!ok) throw new AssertionError("wrong result: " + what);
    }
}
