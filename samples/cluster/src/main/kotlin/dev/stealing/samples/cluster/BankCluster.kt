package dev.stealing.samples.cluster

import com.typesafe.config.Config
import com.typesafe.config.ConfigFactory
import org.apache.pekko.actor.typed.ActorRef
import org.apache.pekko.actor.typed.ActorSystem
import org.apache.pekko.actor.typed.javadsl.Behaviors
import org.apache.pekko.cluster.Member
import org.apache.pekko.cluster.MemberStatus
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding
import org.apache.pekko.cluster.sharding.typed.javadsl.Entity
import org.apache.pekko.cluster.typed.Cluster
import java.time.Duration
import java.util.concurrent.CompletableFuture

/** Starting a node of the bank cluster and reaching its accounts; used by [main] and by the test. */
object BankCluster {
    const val SYSTEM_NAME = "bank"

    /** The config of a node on [port] of the loopback interface, joining the seed nodes on [seedPorts]. */
    fun config(port: Int, seedPorts: List<Int>): Config = ConfigFactory.parseString(
        """
        pekko.remote.artery.canonical.port = $port
        pekko.cluster.seed-nodes = [${seedPorts.joinToString { "\"pekko://$SYSTEM_NAME@127.0.0.1:$it\"" }}]
        """.trimIndent(),
    ).withFallback(ConfigFactory.load())

    /** Starts a node with [config] and the account entities' sharding on it. */
    fun start(config: Config): ActorSystem<Void> {
        val system = ActorSystem.create(Behaviors.empty<Void>(), SYSTEM_NAME, config)
        val node = nodeName(system)
        ClusterSharding.get(system).init(Entity.of(Account.TYPE_KEY) { ctx -> Account.create(ctx.entityId, node) })
        return system
    }

    /** The account [accountId], wherever the cluster keeps it. */
    fun account(system: ActorSystem<*>, accountId: String) =
        ClusterSharding.get(system).entityRefFor(Account.TYPE_KEY, accountId)

    /** The node [system] is, as its accounts' replies name it (`bank@127.0.0.1:2551`). */
    fun nodeName(system: ActorSystem<*>): String = Cluster.get(system).selfMember().address().hostPort()

    /** Waits until [system] sees [members] members up, or throws after [timeout]. */
    fun awaitUp(system: ActorSystem<*>, members: Int, timeout: Duration) =
        awaitCluster(system, timeout, "have $members members up") { all -> all.count { it.status() == MemberStatus.up() } >= members }

    /** Waits until [system] sees exactly [members] members (any status), or throws after [timeout]. */
    fun awaitMembers(system: ActorSystem<*>, members: Int, timeout: Duration) =
        awaitCluster(system, timeout, "come to $members members") { all -> all.count() == members }

    private fun awaitCluster(system: ActorSystem<*>, timeout: Duration, what: String, done: (Iterable<Member>) -> Boolean) {
        val deadline = System.nanoTime() + timeout.toNanos()
        while (!done(Cluster.get(system).state().members)) {
            check(System.nanoTime() < deadline) { "the cluster did not $what within $timeout" }
            Thread.sleep(50)
        }
    }

    /** Asks [accountId] to add [amount]; the reply, or a failure after [timeout]. */
    fun change(system: ActorSystem<*>, accountId: String, amount: Long, timeout: Duration): CompletableFuture<Account.Balance> =
        account(system, accountId).ask({ replyTo: ActorRef<Account.Balance> -> Account.Change(amount, replyTo) }, timeout)
            .toCompletableFuture()
}
