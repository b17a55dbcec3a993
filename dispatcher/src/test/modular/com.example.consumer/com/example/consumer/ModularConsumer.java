package com.example.consumer;

import dev.stealing.ForkedTask;
import dev.stealing.StealingDispatcher;
import dev.stealing.StealingExecutorService;
import dev.stealing.StealingOptions;

import java.lang.module.ModuleDescriptor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordingFile;

/**
 * Uses the library the way a modular Java application would, with only kotlin-stdlib and
 * kotlinx-coroutines beside it on the module path. Of the library's optional dependencies,
 * context-propagation is on the class path (where a build tool puts a jar that no module
 * requires) and the others are absent. Prints one line per check; any wrong result ends it
 * with an exception (exit code 1).
 */
public final class ModularConsumer {
    public static void main(String[] args) throws Exception {
        // The library is a named module, not an automatic one, and exports its API package only.
        Module library = StealingDispatcher.class.getModule();
        ModuleDescriptor descriptor = library.getDescriptor();
        check(library.isNamed() && !descriptor.isAutomatic(), "library module " + descriptor);
        Set<String> exported = descriptor.exports().stream().map(ModuleDescriptor.Exports::source).collect(Collectors.toSet());
        check(exported.equals(Set.of("dev.stealing")), "exports " + exported);
        check(ModularConsumer.class.getModule().isNamed(), "consumer is not a named module");
        System.out.println("module " + descriptor.toNameAndVersion() + " exports " + exported);

        // An optional dependency on the class path is used although no module requires it. This
        // runs first: once JFR has committed one of the library's events, the library's module
        // reads the unnamed module anyway.
        try (StealingDispatcher pool = new StealingDispatcher(1, "context", StealingOptions.DEFAULT.withPropagateContext(true))) {
            String result = pool.getExecutor().submit(() -> "ran").join();
            check(result.equals("ran"), "propagateContext task returned " + result);
        }
        System.out.println("context-propagation on the class path: propagateContext works");

        // An absent one: the option that needs it is refused when built, rather than failing
        // later on a missing class.
        check(refused(() -> StealingOptions.DEFAULT.withPinThreads(true)), "pinThreads accepted without affinity");
        System.out.println("affinity absent: pinThreads refused");

        // A failing task reports to the handler; the JFR part below waits for it.
        CountDownLatch failed = new CountDownLatch(1);
        StealingOptions options = StealingOptions.DEFAULT.withExceptionHandler((task, e) -> failed.countDown());
        try (StealingDispatcher pool = new StealingDispatcher(2, "modular", options)) {
            long sum = pool.fork(() -> sum(pool, 1, 100_000)).join();
            check(sum == 5_000_050_000L, "fork/join sum " + sum);
            System.out.println("fork/join sum " + sum);

            StealingExecutorService executor = pool.getExecutor();
            String worker = executor.submit(() -> Thread.currentThread().getName()).join();
            check(worker.startsWith("modular-worker-"), "submit ran on " + worker);
            List<Callable<Integer>> tasks = List.of(() -> 1, () -> 2, () -> 3);
            int total = 0;
            for (ForkedTask<Integer> task : executor.invokeAll(tasks)) total += task.join();
            check(total == 6, "invokeAll total " + total);
            System.out.println("executor: submit on " + worker.replaceAll("\\d+$", "N") + ", invokeAll " + total);

            // The event classes live in the library's module: JFR must see and commit them there.
            Path file = Files.createTempFile("modular-consumer", ".jfr");
            try (Recording recording = new Recording()) {
                recording.enable("dev.stealing.TaskFailure").withThreshold(Duration.ZERO);
                recording.start();
                executor.execute(() -> { throw new IllegalStateException("expected"); });
                check(failed.await(10, TimeUnit.SECONDS), "the failing task did not reach the handler");
                recording.stop();
                recording.dump(file);
            }
            long failures = RecordingFile.readAllEvents(file).stream()
                .filter(e -> e.getEventType().getName().equals("dev.stealing.TaskFailure")).count();
            Files.delete(file);
            check(failures == 1, failures + " TaskFailure events recorded");
            System.out.println("jfr: 1 TaskFailure event");
        }
    }

    /** The sum of [lo, hi]: the lower half forked, the upper half summed here, then joined. */
    static long sum(StealingDispatcher pool, long lo, long hi) {
        if (hi - lo < 1_000) {
            long s = 0;
            for (long i = lo; i <= hi; i++) s += i;
            return s;
        }
        long mid = (lo + hi) >>> 1;
        ForkedTask<Long> lower = pool.fork(() -> sum(pool, lo, mid));
        long upper = sum(pool, mid + 1, hi);
        return lower.join() + upper;
    }

    static boolean refused(Runnable build) {
        try {
            build.run();
            return false;
        } catch (IllegalArgumentException expected) {
            return true;
        }
    }

    static void check(boolean ok, String what) {
        if (!ok) throw new AssertionError("wrong: " + what);
    }
}
