package dev.stealing.samples.cluster

import dev.stealing.pekko.StealingExecutorServiceConfigurator
import java.time.Duration

/**
 * A node of the bank cluster on the loopback interface; one command per node, each in its own
 * terminal (the first node is the seed):
 *
 * ```
 * mvn -q -pl samples/cluster -am install -DskipTests
 * mvn -q -pl samples/cluster exec:java -Dexec.args="25251"
 * mvn -q -pl samples/cluster exec:java -Dexec.args="25252"
 * ```
 *
 * Arguments: this node's port, then the seed nodes' ports (default 25251). Once two members are
 * up, every node deposits into 1,000 accounts every two seconds and prints how the work went:
 * on which nodes the accounts ran, and what its own pool did. Stop it with Ctrl-C.
 */
fun main(args: Array<String>) {
    val port = args.getOrNull(0)?.toIntOrNull() ?: 25251
    val seeds = if (args.size > 1) args.drop(1).map { it.toInt() } else listOf(25251)
    val system = BankCluster.start(BankCluster.config(port, seeds))
    println("node 127.0.0.1:$port up, seed nodes $seeds; waiting for a second member")
    BankCluster.awaitUp(system, 2, Duration.ofMinutes(10))
    val timeout = Duration.ofSeconds(10)
    var round = 0
    while (true) {
        round++
        val replies = (0 until 1_000).map { i -> BankCluster.change(system, "account-$i", 1, timeout) }.map { it.get() }
        val byNode = replies.groupingBy { it.node }.eachCount()
        val pool = StealingExecutorServiceConfigurator.dispatcherOf(system, "pekko.actor.default-dispatcher").stats()
        println("round $round: 1,000 deposits, accounts by node $byNode; this node's pool: ${pool.executed} tasks run, " +
            "${pool.affinityPops} on their account's worker, ${pool.threads} threads")
        Thread.sleep(2_000)
    }
}
