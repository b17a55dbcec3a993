package dev.stealing.pekko;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.stealing.StealingDispatcher;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.DispatcherSelector;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.junit.jupiter.api.Test;

/**
 * A million messages between actor pairs on the pool, each checked on arrival against a ledger
 * per sender: nothing lost, nothing duplicated, each sender's order kept. A pinger keeps a window
 * of messages in flight to its ponger, which echoes each; both sides expect the next sequence
 * number from the other every time, so a lost, doubled or reordered message is seen where it
 * happens.
 */
class MessageLedgerTest {
    private static final int PAIRS = 8;
    private static final int ROUNDS = 1_000_000 / (2 * PAIRS); // each round is a ping and its echo
    private static final int WINDOW = 32;

    record Ping(long seq, ActorRef<Pong> replyTo) {}

    record Pong(long seq) {}

    /** What a pinger reports when its last echo came: echoes seen and the first broken rule, if any. */
    record Done(int pair, long echoes, String error) {}

    @Test
    void aMillionMessagesBetweenPairsKeepTheirLedgers() {
        for (String affinity : new String[] {"off", "on"}) {
            ActorTestKit kit = PekkoTestSystems.testKit("ledger-" + affinity, "affinity = " + affinity);
            try {
                TestProbe<Done> probe = kit.createTestProbe();
                for (int p = 0; p < PAIRS; p++) {
                    ActorRef<Ping> ponger = kit.spawn(ponger(), "ponger-" + p, DispatcherSelector.fromConfig(PekkoTestSystems.DISPATCHER));
                    kit.spawn(pinger(p, ponger, probe.getRef()), "pinger-" + p, DispatcherSelector.fromConfig(PekkoTestSystems.DISPATCHER));
                }
                List<Done> done = new ArrayList<>();
                for (int p = 0; p < PAIRS; p++) done.add(probe.receiveMessage(Duration.ofMinutes(3)));
                for (Done d : done) {
                    assertEquals(null, d.error(), "pair " + d.pair() + " with affinity " + affinity);
                    assertEquals(ROUNDS, d.echoes(), "pair " + d.pair());
                }
                StealingDispatcher pool = StealingExecutorServiceConfigurator.dispatcherOf(kit.system(), PekkoTestSystems.DISPATCHER);
                assertTrue(pool.stats().getExecuted() > PAIRS, pool.stats().toString());
                assertEquals(0, pool.stats().getFailed());
            } finally {
                kit.shutdownTestKit();
            }
        }
    }

    /** Echoes each ping, checking it is the next one from its sender (one pinger per ponger). */
    private static Behavior<Ping> ponger() {
        return Behaviors.setup(ctx -> {
            long[] expected = {0};
            return Behaviors.receiveMessage((Ping ping) -> {
                // A broken ledger is echoed back as a negative number, which the pinger reports.
                long seq = ping.seq() == expected[0] ? ping.seq() : -1 - expected[0];
                expected[0]++;
                ping.replyTo().tell(new Pong(seq));
                return Behaviors.same();
            });
        });
    }

    /** Sends [ROUNDS] pings, [WINDOW] in flight, and checks each echo is the next one. */
    private static Behavior<Pong> pinger(int pair, ActorRef<Ping> ponger, ActorRef<Done> report) {
        return Behaviors.setup(ctx -> {
            long[] sent = {0};
            long[] echoed = {0};
            String[] error = {null};
            for (int i = 0; i < WINDOW; i++) ponger.tell(new Ping(sent[0]++, ctx.getSelf()));
            return Behaviors.receiveMessage((Pong pong) -> {
                if (error[0] == null && pong.seq() != echoed[0]) {
                    error[0] = pong.seq() < 0
                            ? "the ponger got ping " + (-1 - pong.seq()) + " out of order, lost or twice"
                            : "echo " + pong.seq() + " came when " + echoed[0] + " was next";
                }
                echoed[0]++;
                if (sent[0] < ROUNDS) ponger.tell(new Ping(sent[0]++, ctx.getSelf()));
                if (echoed[0] == ROUNDS) report.tell(new Done(pair, echoed[0], error[0]));
                return Behaviors.same();
            });
        });
    }
}
