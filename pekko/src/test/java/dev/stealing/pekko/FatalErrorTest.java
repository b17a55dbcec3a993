package dev.stealing.pekko;

import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.DispatcherSelector;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.junit.jupiter.api.Test;

/**
 * A fatal error that escapes an actor (a {@code LinkageError}: not Scala's {@code NonFatal}) goes
 * to the actor system's handler of uncaught errors, which shuts the system down
 * ({@code pekko.jvm-exit-on-fatal-error} is off here, else the JVM would exit). Pekko's
 * {@code fork-join-executor} hands it to the same handler from its worker thread (it logs
 * "Uncaught error from thread [..]: .., shutting down ActorSystem"); there the shutdown then waits
 * for ever for the failed actor, which never stops, so the system never terminates and that case
 * is not a test. Before, our executor only published the error on the event stream, and the
 * system went on with the actor's state half updated.
 */
class FatalErrorTest {
    @Test
    void aFatalErrorFromAnActorShutsTheSystemDown() throws Exception {
        Config config = ConfigFactory.parseString(
                "fatal-dispatcher {\n"
                    + "  type = Dispatcher\n"
                    + "  executor = \"dev.stealing.pekko.StealingExecutorServiceConfigurator\"\n"
                    + "  stealing-executor { parallelism-min = 2, parallelism-max = 2 }\n"
                    + "}\n"
                    + "pekko.jvm-exit-on-fatal-error = off\n"
                    + "pekko.loglevel = OFF\n"
                    + "pekko.stdout-loglevel = OFF\n"
                    + "pekko.log-dead-letters = off\n")
            .withFallback(ConfigFactory.load());
        ActorTestKit kit = ActorTestKit.create("fatal-error", config);
        try {
            AtomicReference<String> ranOn = new AtomicReference<>();
            ActorRef<String> actor = kit.spawn(Behaviors.receiveMessage((String m) -> {
                ranOn.set(Thread.currentThread().getName());
                throw new LinkageError("a fatal error from an actor, on purpose");
            }), "fatal", DispatcherSelector.fromConfig("fatal-dispatcher"));
            actor.tell("fail");
            kit.system().getWhenTerminated().toCompletableFuture().get(20, TimeUnit.SECONDS);
            assertTrue(ranOn.get() != null && ranOn.get().contains("fatal-dispatcher"), "the actor ran on the pool: " + ranOn.get());
        } finally {
            kit.shutdownTestKit();
        }
    }
}
