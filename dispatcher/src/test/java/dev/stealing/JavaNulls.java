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

    private static boolean npe(Runnable call) {
        try {
            call.run();
            return false;
        } catch (NullPointerException e) {
            return true;
        }
    }
}
