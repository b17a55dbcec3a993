package dev.stealing.pekko;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.stealing.StealingDispatcher;
import dev.stealing.StealingMetrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.DispatcherSelector;
import org.apache.pekko.actor.typed.SupervisorStrategy;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.junit.jupiter.api.Test;

/** Actors on the pool: supervision, failures, blocking, affinity and the pool's figures. */
class ActorBehaviourTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final DispatcherSelector ON_POOL = DispatcherSelector.fromConfig(PekkoTestSystems.DISPATCHER);

    /** Replies with its count of messages since it (re)started, its name and its thread; "fail" throws. */
    record Msg(String text, ActorRef<String> replyTo) {}

    private static Behavior<Msg> counter() {
        return Behaviors.setup(ctx -> {
            int[] count = {0};
            return Behaviors.receiveMessage((Msg m) -> {
                if (m.text().equals("fail")) throw new IllegalStateException("asked to fail");
                count[0]++;
                m.replyTo().tell(count[0] + " " + ctx.getSelf().path().name() + " " + Thread.currentThread().getName());
                return Behaviors.same();
            });
        });
    }

    @Test
    void aSupervisedActorRestartsAndAnUnsupervisedOneStopsWhileThePoolGoesOn() {
        ActorTestKit kit = PekkoTestSystems.testKit("supervision", "");
        try {
            TestProbe<String> probe = kit.createTestProbe();
            ActorRef<Msg> restarting = kit.spawn(
                    Behaviors.supervise(counter()).onFailure(IllegalStateException.class, SupervisorStrategy.restart()), "restarting", ON_POOL);
            restarting.tell(new Msg("a", probe.getRef()));
            restarting.tell(new Msg("b", probe.getRef()));
            assertTrue(probe.receiveMessage(WAIT).startsWith("1 "));
            assertTrue(probe.receiveMessage(WAIT).startsWith("2 "));
            restarting.tell(new Msg("fail", probe.getRef()));
            restarting.tell(new Msg("c", probe.getRef()));
            assertTrue(probe.receiveMessage(WAIT).startsWith("1 "), "the count starts again after a restart");

            ActorRef<Msg> stopping = kit.spawn(counter(), "stopping", ON_POOL);
            stopping.tell(new Msg("fail", probe.getRef()));
            probe.expectTerminated(stopping, WAIT);

            restarting.tell(new Msg("d", probe.getRef()));
            assertTrue(probe.receiveMessage(WAIT).startsWith("2 "));
            assertEquals(0, StealingExecutorServiceConfigurator.dispatcherOf(kit.system(), PekkoTestSystems.DISPATCHER).stats().getFailed(),
                    "an actor's failure is its supervisor's, not a failed task of the pool");
        } finally {
            kit.shutdownTestKit();
        }
    }

    /** Blocks until [release] opens, counting down [entered] once inside its blocking call. */
    record Block(CountDownLatch entered, CountDownLatch release) {}

    /** How an actor blocks: inside the blocking call, counts down [entered], then waits for [release]. */
    interface BlockingCall {
        void awaitIn(CountDownLatch entered, CountDownLatch release) throws Exception;
    }

    @Test
    void actorsBlockingInManagedBlockLeaveThreadsForTheOthers() throws InterruptedException {
        blockingActorsLeaveThreadsForTheOthers("blocking", (entered, release) -> StealingDispatcher.managedBlock(new ForkJoinPool.ManagedBlocker() {
            @Override
            public boolean block() throws InterruptedException {
                entered.countDown();
                release.await();
                return true;
            }

            @Override
            public boolean isReleasable() {
                return release.getCount() == 0;
            }
        }));
    }

    /** `scala.concurrent.blocking`, as a Scala actor writes it; without the executor's block context it would not compensate. */
    @Test
    void actorsBlockingInScalasBlockingLeaveThreadsForTheOthers() throws InterruptedException {
        blockingActorsLeaveThreadsForTheOthers("scala-blocking", (entered, release) -> scala.concurrent.package$.MODULE$.blocking(() -> {
            entered.countDown();
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return null;
        }));
    }

    /** An actor's view of Scala's block context: the pool's by default, Scala's own with `blocking-context = off`. */
    @Test
    void blockingContextOffLeavesScalasDefault() {
        for (String setting : new String[] {"", "blocking-context = off"}) {
            ActorTestKit kit = PekkoTestSystems.testKit("block-context", setting);
            try {
                TestProbe<String> probe = kit.createTestProbe();
                ActorRef<ActorRef<String>> actor = kit.spawn(Behaviors.receiveMessage((ActorRef<String> replyTo) -> {
                    replyTo.tell(scala.concurrent.BlockContext.current().getClass().getSimpleName());
                    return Behaviors.same();
                }), "context", ON_POOL);
                actor.tell(probe.getRef());
                String context = probe.receiveMessage(WAIT);
                assertEquals(setting.isEmpty(), context.equals("PoolBlockContext"), "with \"" + setting + "\": " + context);
            } finally {
                kit.shutdownTestKit();
            }
        }
    }

    /**
     * Two actors block with [call] on a pool of two workers; a third actor still answers, and the
     * pool counts both workers as blocked (compensation, not the starvation monitor's presumption).
     */
    private static void blockingActorsLeaveThreadsForTheOthers(String name, BlockingCall call) throws InterruptedException {
        ActorTestKit kit = PekkoTestSystems.testKit(name, "");
        CountDownLatch release = new CountDownLatch(1);
        try {
            CountDownLatch entered = new CountDownLatch(2); // as many as the pool's workers
            for (int i = 0; i < 2; i++) {
                ActorRef<Block> blocker = kit.spawn(Behaviors.receiveMessage((Block b) -> {
                    call.awaitIn(b.entered(), b.release());
                    return Behaviors.same();
                }), "blocker-" + i, ON_POOL);
                blocker.tell(new Block(entered, release));
            }
            assertTrue(entered.await(WAIT.toSeconds(), TimeUnit.SECONDS), "both workers entered their blocking call");
            TestProbe<String> probe = kit.createTestProbe();
            ActorRef<Msg> other = kit.spawn(counter(), "other", ON_POOL);
            other.tell(new Msg("a", probe.getRef()));
            assertTrue(probe.receiveMessage(WAIT).startsWith("1 "), "another actor ran while both workers blocked");
            StealingDispatcher pool = StealingExecutorServiceConfigurator.dispatcherOf(kit.system(), PekkoTestSystems.DISPATCHER);
            assertEquals(2, pool.stats().getBlockedThreads(), pool.stats().toString());
        } finally {
            release.countDown();
            kit.shutdownTestKit();
        }
    }

    @Test
    void withAffinityEachActorRunsOnOneThread() {
        ActorTestKit kit = PekkoTestSystems.testKit("affinity", "affinity = on");
        try {
            int actors = 8;
            int messages = 300;
            TestProbe<String> probe = kit.createTestProbe();
            List<ActorRef<Msg>> refs = new ArrayList<>();
            for (int a = 0; a < actors; a++) refs.add(kit.spawn(counter(), "keyed-" + a, ON_POOL));
            for (int m = 0; m < messages; m++) {
                for (ActorRef<Msg> ref : refs) ref.tell(new Msg("m", probe.getRef()));
            }
            Map<String, Set<String>> threadsByActor = new HashMap<>();
            for (int i = 0; i < actors * messages; i++) {
                String[] reply = probe.receiveMessage(WAIT).split(" ");
                threadsByActor.computeIfAbsent(reply[1], k -> new HashSet<>()).add(reply[2]);
            }
            assertEquals(actors, threadsByActor.size());
            threadsByActor.forEach((actor, threads) -> assertEquals(1, threads.size(), actor + " ran on " + threads));
            StealingDispatcher pool = StealingExecutorServiceConfigurator.dispatcherOf(kit.system(), PekkoTestSystems.DISPATCHER);
            assertTrue(pool.stats().getAffinityPops() > 0, pool.stats().toString());
        } finally {
            kit.shutdownTestKit();
        }
    }

    @Test
    void thePoolsMetersAreSeenThroughTheDispatcher() {
        ActorTestKit kit = PekkoTestSystems.testKit("metrics", "name = \"metered\"");
        try {
            TestProbe<String> probe = kit.createTestProbe();
            ActorRef<Msg> actor = kit.spawn(counter(), "counted", ON_POOL);
            for (int i = 0; i < 100; i++) actor.tell(new Msg("m", probe.getRef()));
            for (int i = 0; i < 100; i++) probe.receiveMessage(WAIT);
            SimpleMeterRegistry registry = new SimpleMeterRegistry();
            new StealingMetrics(StealingExecutorServiceConfigurator.dispatcherOf(kit.system(), PekkoTestSystems.DISPATCHER)).bindTo(registry);
            String meters = registry.getMetersAsString();
            assertTrue(meters.contains("metered"), meters);
            assertTrue(registry.getMeters().size() > 5, meters);
        } finally {
            kit.shutdownTestKit();
        }
    }
}
