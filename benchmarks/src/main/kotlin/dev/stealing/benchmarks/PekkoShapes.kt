package dev.stealing.benchmarks

import com.typesafe.config.ConfigFactory
import org.apache.pekko.actor.AbstractActor
import org.apache.pekko.actor.ActorRef
import org.apache.pekko.actor.ActorSystem
import org.apache.pekko.actor.Props
import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit

/**
 * The shapes of Apache Pekko's own actor benchmarks (`ForkJoinActorBenchmark`,
 * `AffinityPoolComparativeBenchmark` and `TellOnlyBenchmark` in Pekko's bench-jmh), with classic
 * actors, on a dispatcher per executor and throughput in one actor system ([PekkoSystem]):
 *
 * - `pp-few` / `pp-many`: pairs of actors that bounce a message back and forth, each pair
 *   started with `2 x throughput` messages in flight; fewer pairs than cores (`cores / 2`, at
 *   least one) or more (`2 x cores`);
 * - `flood-pipe`: four actors in a line, the first flooded with messages from the caller, each
 *   forwarding to the next;
 * - `tell-only`: the caller tells one actor messages, which it counts.
 *
 * Each run returns the time per message in nanoseconds, from the first send to the last
 * message's arrival (a latch the last actor counts down).
 */
object PekkoShapes {
    /** The executors, as report ids: ours without and with affinity, and Pekko's three. */
    val EXECUTORS = listOf("stealing", "stealing-affinity", "fjp", "tpe", "affinity")

    /** Pekko's executors: the peers of the rows. */
    val PEERS = listOf("fjp", "tpe", "affinity")

    /** What each executor id is in Pekko's terms (for notes and the README). */
    val NAMES = mapOf(
        "stealing" to "StealingExecutorServiceConfigurator",
        "stealing-affinity" to "StealingExecutorServiceConfigurator with affinity = on",
        "fjp" to "fork-join-executor",
        "tpe" to "thread-pool-executor (fixed size)",
        "affinity" to "affinity-pool-executor",
    )

    /** The throughputs the dispatchers are configured with (messages per mailbox run). */
    val THROUGHPUTS = listOf(50, 1)

    object Message

    object Stop

    /** One side of a ping-pong pair: answers each message until it has answered its share, then counts down. */
    class PingPong(private var left: Int, private val done: CountDownLatch) : AbstractActor() {
        override fun createReceive(): Receive = receiveBuilder().matchAny {
            if (left == 0) {
                done.countDown()
                context.stop(self)
            }
            sender.tell(Message, self)
            left--
        }.build()
    }

    /** A stage of the pipe: forwards to [next]; the last stage counts [expected] messages, then counts down. */
    class Pipe(private val next: ActorRef?, private var expected: Int, private val done: CountDownLatch) : AbstractActor() {
        override fun createReceive(): Receive = receiveBuilder().matchAny {
            if (next != null) {
                next.forward(it, context)
            } else if (--expected == 0) {
                done.countDown()
            }
        }.build()
    }

    /** Counts [expected] messages, then counts down. */
    class Counter(private var expected: Int, private val done: CountDownLatch) : AbstractActor() {
        override fun createReceive(): Receive = receiveBuilder().matchAny {
            if (--expected == 0) done.countDown()
        }.build()
    }

    /** The dispatcher id of [executor] at [throughput]. */
    fun dispatcherId(executor: String, throughput: Int): String = "bench-$executor-t$throughput"

    /**
     * An actor system with a dispatcher for each executor of [executors] at each throughput of
     * [THROUGHPUTS], all with [parallelism] threads and Pekko's single-consumer mailbox (as in
     * Pekko's affinity benchmark).
     */
    fun newSystem(parallelism: Int, executors: List<String> = EXECUTORS): ActorSystem {
        val dispatchers = executors.flatMap { ex -> THROUGHPUTS.map { t -> dispatcherConfig(ex, t, parallelism) } }
        val config = ConfigFactory.parseString(
            """
            pekko.log-dead-letters = off
            pekko.loglevel = WARNING
            pekko.actor.default-mailbox.mailbox-type = "org.apache.pekko.dispatch.SingleConsumerOnlyUnboundedMailbox"
            ${dispatchers.joinToString("\n")}
            """.trimIndent(),
        ).withFallback(ConfigFactory.load(PekkoShapes::class.java.classLoader))
        return ActorSystem.create("pekko-shapes", config, PekkoShapes::class.java.classLoader)
    }

    private fun dispatcherConfig(executor: String, throughput: Int, p: Int): String {
        val body = when (executor) {
            "stealing", "stealing-affinity" -> """
                executor = "dev.stealing.pekko.StealingExecutorServiceConfigurator"
                stealing-executor {
                  parallelism-min = $p
                  parallelism-factor = 1.0
                  parallelism-max = $p
                  affinity = ${if (executor == "stealing-affinity") "on" else "off"}
                  name = "${dispatcherId(executor, throughput)}"
                }"""
            "fjp" -> """
                executor = "fork-join-executor"
                fork-join-executor {
                  parallelism-min = $p
                  parallelism-factor = 1.0
                  parallelism-max = $p
                }"""
            "tpe" -> """
                executor = "thread-pool-executor"
                thread-pool-executor.fixed-pool-size = $p"""
            "affinity" -> """
                executor = "affinity-pool-executor"
                affinity-pool-executor {
                  parallelism-min = $p
                  parallelism-factor = 1.0
                  parallelism-max = $p
                  task-queue-size = 512
                  idle-cpu-level = 5
                  fair-work-distribution.threshold = 2048
                }"""
            else -> throw IllegalArgumentException("executor must be one of $EXECUTORS, was $executor")
        }
        return "${dispatcherId(executor, throughput)} {\n  type = Dispatcher\n  throughput = $throughput\n$body\n}"
    }

    /** Pairs for `pp-few` and `pp-many` on [cores] cores. */
    fun pairs(shape: String, cores: Int): Int = when (shape) {
        "pp-few" -> maxOf(1, cores / 2)
        "pp-many" -> 2 * cores
        else -> throw IllegalArgumentException("not a ping-pong shape: $shape")
    }

    /**
     * Ping-pong between [pairs] pairs on [dispatcher], [messagesPerPair] messages per pair, each
     * pair started with `2 x` [throughput] messages in flight; ns per message.
     */
    fun pingPong(system: ActorSystem, dispatcher: String, pairs: Int, messagesPerPair: Int, throughput: Int): Double {
        val done = CountDownLatch(2 * pairs)
        val actors = (0 until pairs).map {
            val props = Props.create(PingPong::class.java, messagesPerPair / 2, done).withDispatcher(dispatcher)
            system.actorOf(props) to system.actorOf(props)
        }
        val start = System.nanoTime()
        for ((ping, pong) in actors) repeat(2 * throughput) { ping.tell(Message, pong) }
        await(done, "ping-pong on $dispatcher")
        return (System.nanoTime() - start).toDouble() / (pairs.toLong() * messagesPerPair)
    }

    /** [messages] through a pipe of four actors on [dispatcher], sent by the caller; ns per message. */
    fun floodPipe(system: ActorSystem, dispatcher: String, messages: Int): Double {
        val done = CountDownLatch(1)
        val end = system.actorOf(Props.create(Pipe::class.java, null, messages, done).withDispatcher(dispatcher))
        val middle = system.actorOf(Props.create(Pipe::class.java, end, 0, done).withDispatcher(dispatcher))
        val second = system.actorOf(Props.create(Pipe::class.java, middle, 0, done).withDispatcher(dispatcher))
        val first = system.actorOf(Props.create(Pipe::class.java, second, 0, done).withDispatcher(dispatcher))
        val start = System.nanoTime()
        repeat(messages) { first.tell(Message, ActorRef.noSender()) }
        await(done, "flood pipe on $dispatcher")
        val elapsed = System.nanoTime() - start
        for (a in listOf(first, second, middle, end)) system.stop(a)
        return elapsed.toDouble() / messages
    }

    /** [messages] told by the caller to one actor on [dispatcher]; ns per message. */
    fun tellOnly(system: ActorSystem, dispatcher: String, messages: Int): Double {
        val done = CountDownLatch(1)
        val counter = system.actorOf(Props.create(Counter::class.java, messages, done).withDispatcher(dispatcher))
        val start = System.nanoTime()
        repeat(messages) { counter.tell(Message, ActorRef.noSender()) }
        await(done, "tell-only on $dispatcher")
        val elapsed = System.nanoTime() - start
        system.stop(counter)
        return elapsed.toDouble() / messages
    }

    private fun await(done: CountDownLatch, what: String) {
        check(done.await(5, TimeUnit.MINUTES)) { "$what: not done within 5 minutes" }
    }

    /** Terminates [system] and waits for it. */
    fun terminate(system: ActorSystem) {
        system.terminate()
        system.whenTerminated.toCompletableFuture().get(1, TimeUnit.MINUTES)
    }
}
