package dev.stealing.samples;

import dev.stealing.ForkedTask;
import dev.stealing.StealingDispatcher;
import dev.stealing.StealingExecutorService;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ForkJoinPool;

/**
 * The Java snippet of README.md, verbatim between the {@code // README:} markers, run by the
 * build ({@code mvn verify} executes this class in the samples module), so the README cannot
 * drift from the API.
 *
 * <p>Run: {@code mvn -q -pl samples -am compile exec:java -Dexec.mainClass=dev.stealing.samples.ReadmeJava}
 */
public final class ReadmeJava {
    public static void main(String[] args) throws Exception {
        QuickStart.main(args); // the README's Java quick start
        // README: java
        try (StealingDispatcher pool = new StealingDispatcher(4, "sort")) {
            ForkedTask<Long> sum = pool.fork(() -> sum(pool, 0, 1_000_000)); // from outside: the global queue
            System.out.println(sum.join());                                     // 499999500000

            StealingExecutorService executor = pool.getExecutor();              // submit() returns a ForkedTask
            executor.submit(() -> System.out.println("on " + Thread.currentThread().getName())).join();

            CountDownLatch done = new CountDownLatch(1);
            pool.affinityExecutor("account-42").execute(done::countDown);      // always the same worker
            StealingDispatcher.managedBlock(new ForkJoinPool.ManagedBlocker() { // a blocking region
                public boolean block() throws InterruptedException { done.await(); return true; }
                public boolean isReleasable() { return done.getCount() == 0; }
            });
        }
        // README: end
    }

    // README: java-sum
    static long sum(StealingDispatcher pool, int lo, int hi) {
        if (hi - lo <= 10_000) {
            long s = 0;
            for (int i = lo; i < hi; i++) s += i;
            return s;
        }
        int mid = (lo + hi) >>> 1;
        ForkedTask<Long> left = pool.fork(() -> sum(pool, lo, mid)); // on this worker's deque
        long right = sum(pool, mid, hi);
        return left.join() + right; // runs `left` inline if nobody stole it, else helps the thief, then blocks
    }
    // README: end
}
