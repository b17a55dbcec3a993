package dev.stealing.pekko;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.stealing.StealingDispatcher;
import dev.stealing.StealingStats;
import java.time.Duration;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.DispatcherSelector;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.junit.jupiter.api.Test;

/** The configurator from config alone: a dispatcher on the pool, its settings, and bad values. */
class ConfiguratorTest {
    record Ask(ActorRef<String> replyTo) {}

    @Test
    void anActorRepliesFromAWorkerOfThePool() {
        ActorTestKit kit = PekkoTestSystems.testKit("config-only", "name = \"accounts\"\n max-threads = 40");
        try {
            String thread = threadOfAnActor(kit);
            assertTrue(thread.startsWith("accounts-worker-"), thread);

            StealingDispatcher pool = StealingExecutorServiceConfigurator.dispatcherOf(kit.system(), PekkoTestSystems.DISPATCHER);
            StealingStats stats = pool.stats();
            assertEquals("accounts", stats.getName());
            assertEquals(2, stats.getParallelism());
            assertEquals(40, stats.getMaxThreads(), "max-threads reaches the pool");
            assertTrue(stats.getExecuted() >= 1, stats.toString());
        } finally {
            kit.shutdownTestKit();
        }
    }

    @Test
    void theDefaultNameIsTheSystemsAndTheDispatchersAndParallelismScalesAsForkJoinExecutor() {
        ActorTestKit kit = ActorTestKit.create("scaled", PekkoTestSystems.config("parallelism-max = 64\n parallelism-min = 3\n parallelism-factor = 0.5"));
        try {
            String thread = threadOfAnActor(kit);
            assertTrue(thread.startsWith("scaled-" + PekkoTestSystems.DISPATCHER + "-worker-"), thread);
            int expected = Math.min(Math.max((int) Math.ceil(Runtime.getRuntime().availableProcessors() * 0.5), 3), 64);
            assertEquals(expected, StealingExecutorServiceConfigurator.dispatcherOf(kit.system(), PekkoTestSystems.DISPATCHER).getParallelism());
        } finally {
            kit.shutdownTestKit();
        }
    }

    /** The name of the thread on which an actor on the test dispatcher answers a message. */
    private static String threadOfAnActor(ActorTestKit kit) {
        ActorRef<Ask> actor = kit.spawn(
                Behaviors.receiveMessage((Ask a) -> {
                    a.replyTo().tell(Thread.currentThread().getName());
                    return Behaviors.same();
                }),
                "echo",
                DispatcherSelector.fromConfig(PekkoTestSystems.DISPATCHER));
        TestProbe<String> probe = kit.createTestProbe();
        actor.tell(new Ask(probe.getRef()));
        return probe.receiveMessage(Duration.ofSeconds(30));
    }

    @Test
    void scaledParallelismFollowsPekkosRule() {
        assertEquals(8, StealingExecutorSettings.Companion.scaledParallelism(8, 1.0, 64, 2));
        assertEquals(16, StealingExecutorSettings.Companion.scaledParallelism(8, 2.0, 64, 8));
        assertEquals(4, StealingExecutorSettings.Companion.scaledParallelism(8, 1.0, 4, 2)); // the cap wins over the floor, as in Pekko
        assertEquals(2, StealingExecutorSettings.Companion.scaledParallelism(1, 0.1, 64, 12));
    }

    @Test
    void badValuesFailTheDispatchersCreationNamingTheKey() {
        assertBadValue("parallelism-min = 0", "stealing-executor.parallelism-min must be at least 1, was 0");
        assertBadValue("parallelism-max = 0", "stealing-executor.parallelism-max must be at least 1, was 0");
        assertBadValue("parallelism-factor = -1", "stealing-executor.parallelism-factor must be a positive number");
        assertBadValue("parallelism-min = many", "stealing-executor.parallelism-min");
        assertBadValue("max-threads = -1", "stealing-executor.max-threads must be 0");
        assertBadValue("keep-alive = 0s", "stealing-executor.keep-alive must be positive");
        assertBadValue("keep-alive = soon", "stealing-executor.keep-alive");
        assertBadValue("affinity = perhaps", "stealing-executor.affinity");
        assertBadValue("blocking-context = sometimes", "stealing-executor.blocking-context");
        assertBadValue("spin-rounds = -1", "stealing-executor.spin-rounds must be 0 or more");
    }

    private static void assertBadValue(String setting, String expected) {
        ActorTestKit kit = PekkoTestSystems.testKit("bad-config", setting);
        try {
            Throwable e = assertThrows(Throwable.class, () -> kit.system().dispatchers().lookup(
                    DispatcherSelector.fromConfig(PekkoTestSystems.DISPATCHER)));
            String messages = messagesOf(e);
            assertTrue(messages.contains(expected), "for " + setting + ": " + messages);
            assertTrue(messages.contains("dispatcher [" + PekkoTestSystems.DISPATCHER + "]"), "for " + setting + ": " + messages);
        } finally {
            kit.shutdownTestKit();
        }
    }

    private static String messagesOf(Throwable e) {
        StringBuilder b = new StringBuilder();
        for (Throwable t = e; t != null; t = t.getCause()) b.append(t).append(" | ");
        return b.toString();
    }
}
