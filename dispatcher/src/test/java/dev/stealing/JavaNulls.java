package dev.stealing;

import java.util.concurrent.Callable;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/** Null arguments from Java, which Kotlin callers cannot pass. */
final class JavaNulls {
    private JavaNulls() {}

    /** True if every null task or unit is refused with a NullPointerException, as the javadoc asks. */
    static boolean scheduleNullTask(ScheduledExecutorService ex) {
        return npe(() -> ex.schedule((Runnable) null, 1, TimeUnit.SECONDS))
            && npe(() -> ex.schedule((Callable<Object>) null, 1, TimeUnit.SECONDS))
            && npe(() -> ex.schedule(() -> { }, 1, null))
            && npe(() -> ex.scheduleAtFixedRate(null, 1, 1, TimeUnit.SECONDS))
            && npe(() -> ex.scheduleWithFixedDelay(() -> { }, 1, 1, null));
    }

    /** The messages of the NullPointerExceptions that each null argument of the two forkJoin forms gives. */
    static java.util.List<String> forkJoinMessages(StealingDispatcher pool) {
        Callable<Integer> one = () -> 1;
        java.util.function.BiFunction<Integer, Integer, Integer> sum = Integer::sum;
        Runnable nothing = () -> { };
        return java.util.Arrays.asList(
            npeMessage(() -> pool.forkJoin(null, one, sum)),
            npeMessage(() -> pool.forkJoin(one, null, sum)),
            npeMessage(() -> pool.forkJoin(one, one, null)),
            npeMessage(() -> pool.forkJoin(null, nothing)),
            npeMessage(() -> pool.forkJoin(nothing, null)));
    }

    private static String npeMessage(Runnable call) {
        try {
            call.run();
            return "no exception";
        } catch (NullPointerException e) {
            return e.getMessage();
        }
    }

    private static boolean npe(Runnable call) {
        try {
            call.run();
            return false;
        } catch (NullPointerException e) {
            return true;
        }
    }
}
