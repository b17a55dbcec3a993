package dev.stealing.samples;

import dev.stealing.ForkedTask;
import dev.stealing.StealingDispatcher;
import dev.stealing.StealingExecutorService;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ForkJoinPool;

/**
 * The Java snippets of docs/java.md (the README's Java section points there), verbatim between
 * the {@code // README:} markers, run by the build ({@code mvn verify} executes this class in the
 * samples module), so the docs cannot drift from the API.
 *
 * <p>Run: {@code mvn -q -pl samples -am compile exec:java -Dexec.mainClass=dev.stealing.samples.ReadmeJava}
 * (prints what the snippet prints). The build passes {@code --check}: the snippet's output is
 * captured and checked instead of printed, so {@code mvn -q} stays quiet.
 */
public final class ReadmeJava {
    public static void main(String[] args) throws Exception {
        if (args.length == 1 && args[0].equals("--check")) {
            check();
        } else {
            QuickStart.main(args); // the README's Java quick start
            JavaFirst.main(args); // the README's Java section
            readme();
        }
    }

    /** Runs the quick start and the snippet with System.out captured, and fails unless it printed what it should. */
    private static void check() throws Exception {
        PrintStream out = System.out;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try {
            QuickStart.main(new String[0]);
            JavaFirst.main(new String[0]);
            readme();
        } finally {
            System.setOut(out);
        }
        List<String> lines = captured.toString(StandardCharsets.UTF_8).lines().toList();
        List<String> expected = List.of("75025", "42", "832040", "333332833333500000",
            "[Order[customer=c, cents=100], Order[customer=b, cents=300], Order[customer=a, cents=300]]", "answer 42",
            "499999500000");
        if (lines.size() != 8 || !lines.subList(0, 7).equals(expected) || !lines.get(7).startsWith("on sort-worker-")) {
            throw new AssertionError("README Java snippets printed " + lines
                + ", expected " + expected + " and on sort-worker-<n>");
        }
        if (fibOnTheSharedPool(20) != 6765) throw new AssertionError("ForkedTask.fork on the shared pool: fib(20) != 6765");
    }

    static void readme() throws Exception {
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

    // README: java-fork-here
    static long fib(int n) { // runs in a task of some StealingDispatcher: no pool parameter
        if (n < 2) return n;
        ForkedTask<Long> left = ForkedTask.fork(() -> fib(n - 1)); // onto this worker's deque
        return fib(n - 2) + left.join();
    }

    static long fibOnTheSharedPool(int n) {
        return StealingDispatcher.getShared().fork(() -> fib(n)).join(); // from outside: the global queue
    }
    // README: end

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
