package dev.stealing;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The library as Java sees it, called by {@code JavaApiSpec}. This file compiling is half the
 * test: no cast anywhere, the executor's {@code submit} and {@code invokeAll} give
 * {@link ForkedTask}s, the shared pool is a {@link StealingDispatcher}, options take
 * {@code java.time.Duration}.
 */
final class JavaApi {
    private JavaApi() {
    }

    /** Every way to create a task through the executor, joined without a cast; their sum. */
    static int submitAndJoin(StealingDispatcher pool) throws Exception {
        StealingExecutorService executor = pool.getExecutor();
        ForkedTask<Integer> callable = executor.submit(() -> 40);
        ForkedTask<?> runnable = executor.submit(() -> { });
        ForkedTask<Integer> withResult = executor.submit(() -> { }, 1);
        List<Callable<Integer>> tasks = Arrays.asList(() -> 1, () -> 2);
        List<ForkedTask<Integer>> all = executor.invokeAll(tasks);
        List<ForkedTask<Integer>> allTimed = executor.invokeAll(tasks, 10, TimeUnit.SECONDS);
        int fromFuture = CompletableFuture.supplyAsync(() -> -6, executor).get(10, TimeUnit.SECONDS);
        runnable.join();
        int sum = callable.join() + withResult.join() + fromFuture;
        for (ForkedTask<Integer> t : all) sum += t.join();
        for (ForkedTask<Integer> t : allTimed) sum += t.join();
        return sum; // 40 + 1 - 6 + 3 + 3 = 41
    }

    /** fib(n) by fork/join without carrying the pool along: ForkedTask.fork forks onto the caller's pool. */
    static long fibHere(int n) {
        if (n < 2) return n;
        ForkedTask<Long> left = ForkedTask.fork(() -> fibHere(n - 1));
        return fibHere(n - 2) + left.join();
    }

    /** The shared pool, as a StealingDispatcher. */
    static StealingDispatcher shared() {
        return StealingDispatcher.getShared();
    }

    /** Parallelism of the shared pool, as Java asks (the companion Default's own members are hidden from Java). */
    static int sharedParallelism() {
        return StealingDispatcher.getShared().getParallelism();
    }

    /** Java durations, through the full constructor and the with-copies (source compatibility). */
    static List<StealingOptions> options() {
        List<StealingOptions> list = new ArrayList<>();
        list.add(StealingOptions.DEFAULT.withKeepAlive(Duration.ofSeconds(30)).withStarvationInterval(Duration.ZERO));
        list.add(new StealingOptions(true, null, 32, 61, 64, 256, false, 0, Duration.ofSeconds(30), Duration.ZERO, false));
        return list;
    }

    /** try-with-resources on the executor itself: close() throws no checked exception. */
    static boolean closeExecutor() {
        StealingDispatcher pool = new StealingDispatcher(1, "java-close");
        try (StealingExecutorService executor = pool.getExecutor()) {
            executor.execute(() -> { });
        }
        return pool.getExecutor().isTerminated();
    }
}
