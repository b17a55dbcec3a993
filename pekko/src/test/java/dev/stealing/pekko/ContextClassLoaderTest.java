package dev.stealing.pekko;

import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URL;
import java.net.URLClassLoader;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.AbstractActor;
import org.apache.pekko.actor.ActorRef;
import org.apache.pekko.actor.ActorSystem;
import org.apache.pekko.actor.Props;
import org.apache.pekko.pattern.Patterns;
import org.junit.jupiter.api.Test;

/**
 * The context class loader an actor sees: the actor system's class loader, as on Pekko's own
 * {@code fork-join-executor}, whatever thread's first use created the executor or started its
 * threads.
 */
class ContextClassLoaderTest {
    /** Answers with the name and the context class loader of the thread it runs on. */
    static final class LoaderEcho extends AbstractActor {
        @Override
        public Receive createReceive() {
            return receiveBuilder()
                    .matchAny(m -> getSender().tell(Thread.currentThread().getContextClassLoader(), getSelf()))
                    .build();
        }
    }

    @Test
    void tasksAndActorsSeeTheActorSystemsClassLoaderOnForkJoinExecutorAndOnThePool() throws Exception {
        ClassLoader systemLoader = new URLClassLoader(new URL[0], ContextClassLoaderTest.class.getClassLoader());
        ClassLoader requestLoader = new URLClassLoader(new URL[0], ContextClassLoaderTest.class.getClassLoader());
        ActorSystem system = ActorSystem.create("loaders", PekkoTestSystems.config(""), systemLoader);
        Thread sender = Thread.currentThread();
        ClassLoader before = sender.getContextClassLoader();
        sender.setContextClassLoader(requestLoader); // the first message comes from a thread with another loader
        try {
            // The reference: Pekko's default dispatcher (fork-join-executor), then the pool.
            for (String dispatcher : new String[] {"pekko.actor.default-dispatcher", PekkoTestSystems.DISPATCHER}) {
                // First a task from this thread: the dispatcher as an ExecutionContext creates its
                // executor on the thread of its first use, here one with the request's loader.
                CompletableFuture<ClassLoader> task = new CompletableFuture<>();
                system.dispatchers().lookup(dispatcher).execute(() -> task.complete(Thread.currentThread().getContextClassLoader()));
                assertSame(systemLoader, task.get(20, TimeUnit.SECONDS), "a task on " + dispatcher);
                ActorRef echo = system.actorOf(Props.create(LoaderEcho.class).withDispatcher(dispatcher));
                Object seen = Patterns.ask(echo, "which", Duration.ofSeconds(10)).toCompletableFuture().get(20, TimeUnit.SECONDS);
                assertSame(systemLoader, seen, "an actor on " + dispatcher);
            }
            assertTrue(StealingExecutorServiceConfigurator.dispatcherOf(system, PekkoTestSystems.DISPATCHER).stats().getExecuted() >= 1);
        } finally {
            sender.setContextClassLoader(before);
            system.terminate();
            system.getWhenTerminated().toCompletableFuture().get(20, TimeUnit.SECONDS);
        }
    }
}
