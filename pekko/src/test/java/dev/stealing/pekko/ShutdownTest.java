package dev.stealing.pekko;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.stealing.StealingDispatcher;
import dev.stealing.StealingStats;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.DispatcherSelector;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.junit.jupiter.api.Test;

/** Terminating the actor system while messages are in flight shuts the pool down, and it drops no task it accepted. */
class ShutdownTest {
    record Work(long n) {}

    @Test
    void terminatingTheSystemMidFlightEndsThePoolWithNothingLeftQueued() throws InterruptedException {
        for (String affinity : new String[] {"off", "on"}) {
            ActorTestKit kit = PekkoTestSystems.testKit("shutdown-" + affinity, "affinity = " + affinity);
            AtomicLong processed = new AtomicLong();
            ActorRef<Work>[] actors = newRefs(16);
            for (int i = 0; i < actors.length; i++) {
                actors[i] = kit.spawn(Behaviors.receiveMessage((Work w) -> {
                    processed.incrementAndGet();
                    if (w.n() > 0) actors[(int) (w.n() % actors.length)].tell(new Work(w.n() - 1)); // keeps messages moving
                    return Behaviors.same();
                }), "worker-" + i, DispatcherSelector.fromConfig(PekkoTestSystems.DISPATCHER));
            }
            // Make sure the pool runs before it is looked up, then flood it and terminate at once.
            TestProbe<String> probe = kit.createTestProbe();
            ActorRef<String> echo = kit.spawn(Behaviors.receiveMessage((String s) -> {
                probe.getRef().tell(s);
                return Behaviors.same();
            }), "echo", DispatcherSelector.fromConfig(PekkoTestSystems.DISPATCHER));
            echo.tell("started");
            probe.expectMessage(Duration.ofSeconds(60), "started");
            StealingDispatcher pool = StealingExecutorServiceConfigurator.dispatcherOf(kit.system(), PekkoTestSystems.DISPATCHER);
            for (int i = 0; i < 10_000; i++) actors[i % actors.length].tell(new Work(1_000));
            long before = processed.get();

            kit.shutdownTestKit(); // terminates the system and waits for it

            assertTrue(pool.getExecutor().awaitTermination(60, TimeUnit.SECONDS), "the pool terminates with the system: " + pool.stats());
            StealingStats stats = pool.stats();
            assertEquals(StealingStats.State.TERMINATED, stats.getState());
            assertEquals(0, stats.getQueuedTasks(), stats.toString());
            assertEquals(0, stats.getFailed(), stats.toString());
            assertTrue(processed.get() >= before, "messages ran while the system went down");
        }
    }

    @SuppressWarnings("unchecked")
    private static ActorRef<Work>[] newRefs(int n) {
        return (ActorRef<Work>[]) new ActorRef<?>[n];
    }
}
