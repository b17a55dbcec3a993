package dev.stealing.pekko;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.util.concurrent.atomic.AtomicReference;
import scala.concurrent.BlockContext;
import org.junit.jupiter.api.Test;

/**
 * A mailbox run's block context, on both of its paths: through Scala's thread-local, set once and
 * left on the thread, and through {@code withBlockContext} around each run where that
 * thread-local cannot be reached. Each runs on a thread of its own, as a worker would.
 */
class MailboxRunTest {
    @Test
    void scalasThreadLocalIsReachedOnThisScalaLibrary() {
        assertNotNull(ScalaContextLocal.threadLocal, "the fast path is the one in use with Scala 2.13");
    }

    @Test
    void throughScalasThreadLocalTheRunSeesThePoolsContextAndTheThreadKeepsIt() throws InterruptedException {
        AtomicReference<BlockContext> during = new AtomicReference<>();
        AtomicReference<BlockContext> after = new AtomicReference<>();
        onThread(() -> {
            new MailboxRun(() -> during.set(BlockContext.current())).runWith(ScalaContextLocal.threadLocal);
            after.set(BlockContext.current());
        });
        assertSame(PoolBlockContext.INSTANCE, during.get());
        assertSame(PoolBlockContext.INSTANCE, after.get(), "left on the worker: the next run needs no set");
    }

    @Test
    void withoutItTheRunSetsTheContextAroundItselfAndRestoresTheThreads() throws InterruptedException {
        AtomicReference<BlockContext> during = new AtomicReference<>();
        AtomicReference<BlockContext> after = new AtomicReference<>();
        AtomicReference<BlockContext> before = new AtomicReference<>();
        onThread(() -> {
            before.set(BlockContext.current());
            new MailboxRun(() -> during.set(BlockContext.current())).runWith(null);
            after.set(BlockContext.current());
        });
        assertSame(PoolBlockContext.INSTANCE, during.get());
        assertSame(before.get(), after.get(), "restored after the run");
    }

    @Test
    void aContextSetInsideARunIsTheRunsOwnAndThePoolsComesBackAfterIt() throws InterruptedException {
        BlockContext other = new BlockContext() {
            @Override
            public <T> T blockOn(scala.Function0<T> thunk, scala.concurrent.CanAwait permit) {
                return thunk.apply();
            }
        };
        AtomicReference<BlockContext> inside = new AtomicReference<>();
        AtomicReference<BlockContext> next = new AtomicReference<>();
        onThread(() -> {
            new MailboxRun(() -> BlockContext.withBlockContext(other, () -> {
                inside.set(BlockContext.current());
                return null;
            })).runWith(ScalaContextLocal.threadLocal);
            new MailboxRun(() -> next.set(BlockContext.current())).runWith(ScalaContextLocal.threadLocal);
        });
        assertSame(other, inside.get());
        assertSame(PoolBlockContext.INSTANCE, next.get());
    }

    private static void onThread(Runnable body) throws InterruptedException {
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread t = new Thread(() -> {
            try {
                body.run();
            } catch (Throwable e) {
                failure.set(e);
            }
        });
        t.start();
        t.join(10_000);
        if (failure.get() != null) throw new AssertionError(failure.get());
    }
}
