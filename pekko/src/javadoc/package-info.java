/**
 * Apache Pekko on a work-stealing pool: name
 * {@link dev.stealing.pekko.StealingExecutorServiceConfigurator} as a dispatcher's
 * {@code executor} in config, and that dispatcher's actors run on a
 * {@code dev.stealing.StealingDispatcher}; no code is needed, from Java or Scala.
 *
 * <pre>
 * my-dispatcher {
 *   type = Dispatcher
 *   executor = "dev.stealing.pekko.StealingExecutorServiceConfigurator"
 *   stealing-executor {
 *     parallelism-min = 2
 *     parallelism-factor = 1.0
 *     parallelism-max = 16
 *     affinity = on
 *   }
 *   throughput = 5
 * }
 * </pre>
 *
 * <p>The keys, their defaults and what they do are in the configurator's page and in the
 * module's {@code reference.conf}; the pool behind a dispatcher, for its {@code stats()} or
 * its Micrometer meters, is
 * {@link dev.stealing.pekko.StealingExecutorServiceConfigurator#dispatcherOf(org.apache.pekko.actor.ClassicActorSystemProvider, java.lang.String)}.
 */
package dev.stealing.pekko;
