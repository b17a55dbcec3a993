package dev.stealing.pekko;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;

/** Actor systems for the tests: a dispatcher on the pool, configured by config alone. */
final class PekkoTestSystems {
    /** The dispatcher's id in every test system. */
    static final String DISPATCHER = "stealing-dispatcher";

    private PekkoTestSystems() {}

    /** A config with the dispatcher of [DISPATCHER] on the pool: 2 workers, and [extra] inside its stealing-executor section. */
    static Config config(String extra) {
        return ConfigFactory.parseString(
                DISPATCHER + " {\n"
                        + "  type = Dispatcher\n"
                        + "  executor = \"dev.stealing.pekko.StealingExecutorServiceConfigurator\"\n"
                        + "  stealing-executor {\n"
                        + "    parallelism-min = 2\n"
                        + "    parallelism-max = 2\n"
                        + "    " + extra + "\n"
                        + "  }\n"
                        + "  throughput = 5\n"
                        + "}\n"
                        + "pekko.loglevel = WARNING\n"
                        + "pekko.log-dead-letters = off\n")
                .withFallback(ConfigFactory.load());
    }

    static ActorTestKit testKit(String name, String extra) {
        return ActorTestKit.create(name, config(extra));
    }
}
