package dev.stealing.samples;

import dev.stealing.ForkedTask;
import dev.stealing.StealingDispatcher;
import dev.stealing.StealingExecutorService;

import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.RecursiveAction;

/**
 * Java fork/join on a StealingDispatcher: a parallel merge sort with {@link ForkedTask}, next to
 * the same algorithm as a {@link RecursiveAction} on a {@link ForkJoinPool}. {@code join()} runs a
 * forked half inline when no other worker has stolen it. The pool's executor also serves
 * {@code CompletableFuture}s and {@code invokeAll}; every task it creates is a {@code ForkedTask},
 * so nothing here needs a cast.
 *
 * <p>Run: {@code mvn -q -pl samples -am compile exec:java -Dexec.mainClass=dev.stealing.samples.ForkJoinSample}
 */
public final class ForkJoinSample {
    private static final int CUTOFF = 8_192;

    public static void main(String[] args) throws Exception {
        int n = 5_000_000;
        int[] input = new Random(42).ints(n).toArray();
        int[] expected = input.clone();
        Arrays.sort(expected);
        int parallelism = Runtime.getRuntime().availableProcessors();

        try (StealingDispatcher pool = new StealingDispatcher(parallelism, "sort")) {
            StealingExecutorService executor = pool.getExecutor();

            // The executor under a CompletableFuture.
            CompletableFuture<Integer> max =
                    CompletableFuture.supplyAsync(() -> Arrays.stream(input).max().getAsInt(), executor);
            // invokeAll: one task per quarter, each counting its negative numbers; joined, no cast.
            List<Callable<Integer>> quarters = List.of(
                    () -> negatives(input, 0, n / 4), () -> negatives(input, n / 4, n / 2),
                    () -> negatives(input, n / 2, 3 * n / 4), () -> negatives(input, 3 * n / 4, n));
            int negatives = 0;
            for (ForkedTask<Integer> quarter : executor.invokeAll(quarters)) negatives += quarter.join();
            if (max.join() != expected[n - 1] || negatives != negatives(input, 0, n)) {
                System.err.println("CompletableFuture or invokeAll computed wrongly");
                System.exit(1);
            }

            ForkJoinPool fjp = new ForkJoinPool(parallelism);
            long[] ours = new long[5];
            long[] theirs = new long[5];
            for (int round = 0; round < 8; round++) {
                int[] a = input.clone();
                long start = System.nanoTime();
                // submit() returns a ForkedTask; from outside the pool, join() simply waits.
                executor.submit(() -> sort(pool, a, new int[n], 0, n)).join();
                long t1 = System.nanoTime() - start;
                check(a, expected, "StealingDispatcher");

                int[] b = input.clone();
                start = System.nanoTime();
                fjp.invoke(new SortAction(b, new int[n], 0, n));
                long t2 = System.nanoTime() - start;
                check(b, expected, "ForkJoinPool");
                if (round >= 3) {
                    ours[round - 3] = t1;
                    theirs[round - 3] = t2;
                }
            }
            fjp.shutdown();
            Arrays.sort(ours);
            Arrays.sort(theirs);
            System.out.printf("merge sort of %,d ints, %d workers (median of 5)%n", n, parallelism);
            System.out.printf("StealingDispatcher ForkedTask: %7.1f ms%n", ours[2] / 1e6);
            System.out.printf("ForkJoinPool RecursiveAction:  %7.1f ms%n", theirs[2] / 1e6);
            System.out.println(pool); // name, parallelism, threads, queued; pool.stats() has every counter
        }
    }

    /** Sorts a[from, to) using tmp; forks the left half, sorts the right half itself, joins. */
    static void sort(StealingDispatcher pool, int[] a, int[] tmp, int from, int to) {
        if (to - from <= CUTOFF) {
            Arrays.sort(a, from, to);
            return;
        }
        int mid = (from + to) >>> 1;
        ForkedTask<Object> left = pool.fork(() -> {
            sort(pool, a, tmp, from, mid);
            return null;
        });
        sort(pool, a, tmp, mid, to);
        left.join();
        merge(a, tmp, from, mid, to);
    }

    static int negatives(int[] a, int from, int to) {
        int count = 0;
        for (int i = from; i < to; i++) if (a[i] < 0) count++;
        return count;
    }

    static void merge(int[] a, int[] tmp, int from, int mid, int to) {
        System.arraycopy(a, from, tmp, from, to - from);
        int i = from, j = mid, k = from;
        while (i < mid && j < to) a[k++] = tmp[i] <= tmp[j] ? tmp[i++] : tmp[j++];
        while (i < mid) a[k++] = tmp[i++];
        while (j < to) a[k++] = tmp[j++];
    }

    static void check(int[] actual, int[] expected, String who) {
        if (!Arrays.equals(actual, expected)) {
            System.err.println(who + " sorted wrongly");
            System.exit(1);
        }
    }

    static final class SortAction extends RecursiveAction {
        private final int[] a, tmp;
        private final int from, to;

        SortAction(int[] a, int[] tmp, int from, int to) {
            this.a = a;
            this.tmp = tmp;
            this.from = from;
            this.to = to;
        }

        @Override
        protected void compute() {
            if (to - from <= CUTOFF) {
                Arrays.sort(a, from, to);
                return;
            }
            int mid = (from + to) >>> 1;
            SortAction left = new SortAction(a, tmp, from, mid);
            left.fork();
            new SortAction(a, tmp, mid, to).compute();
            left.join();
            merge(a, tmp, from, mid, to);
        }
    }
}
