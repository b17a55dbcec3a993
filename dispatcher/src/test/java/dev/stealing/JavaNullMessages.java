package dev.stealing;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

/** Null arguments from Java to every entry point of the executor that takes an object: the messages a Java user sees. */
final class JavaNullMessages {
    private JavaNullMessages() {}

    /** The message of each NullPointerException, or "no NullPointerException" where none was thrown. */
    static List<String> of(StealingExecutorService ex) {
        List<String> messages = new ArrayList<>();
        messages.add(npe(() -> ex.execute(null)));
        messages.add(npe(() -> ex.submit((Callable<Object>) null)));
        messages.add(npe(() -> ex.submit((Runnable) null)));
        messages.add(npe(() -> ex.submit((Runnable) null, 1)));
        messages.add(npe(() -> ex.invokeAll(null)));
        messages.add(npe(() -> ex.invokeAll(null, 1, TimeUnit.SECONDS)));
        messages.add(npe(() -> ex.invokeAll(List.of(() -> 1), 1, null)));
        messages.add(npe(() -> ex.invokeAny(null)));
        messages.add(npe(() -> ex.invokeAny(null, 1, TimeUnit.SECONDS)));
        messages.add(npe(() -> ex.schedule((Runnable) null, 1, TimeUnit.SECONDS)));
        messages.add(npe(() -> ex.schedule((Callable<Object>) null, 1, TimeUnit.SECONDS)));
        messages.add(npe(() -> ex.schedule(() -> { }, 1, null)));
        messages.add(npe(() -> ex.scheduleAtFixedRate(null, 1, 1, TimeUnit.SECONDS)));
        messages.add(npe(() -> ex.scheduleWithFixedDelay(() -> { }, 1, 1, null)));
        messages.add(npe(() -> ex.awaitTermination(0, null)));
        return messages;
    }

    interface Call {
        void run() throws Exception;
    }

    private static String npe(Call call) {
        try {
            call.run();
            return "no NullPointerException";
        } catch (NullPointerException e) {
            return String.valueOf(e.getMessage());
        } catch (Exception e) {
            return "threw " + e;
        }
    }
}
