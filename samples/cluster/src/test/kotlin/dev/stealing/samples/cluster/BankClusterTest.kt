package dev.stealing.samples.cluster

import dev.stealing.pekko.StealingExecutorServiceConfigurator
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import java.net.ServerSocket
import java.time.Duration
import java.util.concurrent.TimeUnit

/**
 * A two-node bank cluster in one JVM (two actor systems on free ports of the loopback
 * interface): deposits and withdrawals to accounts on both nodes, every reply checked against a
 * ledger kept here, and both nodes' pools seen to run the work; then one node leaves, and the
 * accounts it held answer from the other.
 */
class BankClusterTest {
    private val timeout = Duration.ofSeconds(30)

    @Test
    fun aTwoNodeClusterRunsItsAccountsOnBothNodesPoolsAndSurvivesANodeLeaving() {
        val ports = freePorts(2)
        val nodes = ports.map { BankCluster.start(BankCluster.config(it, listOf(ports[0]))) }
        try {
            for (node in nodes) BankCluster.awaitUp(node, 2, Duration.ofMinutes(2))
            // Members up is not yet the second node's shard region known to the coordinator, which
            // gives new shards only to the regions it knows: touch throwaway accounts until one lives
            // on the second node, so that the accounts below are spread over both.
            val second = BankCluster.nodeName(nodes[1])
            val deadline = System.nanoTime() + Duration.ofMinutes(1).toNanos()
            var probe = 0
            while (BankCluster.change(nodes[1], "warm-up-${probe++}", 0, timeout).get(timeout.seconds * 2, TimeUnit.SECONDS).node != second) {
                check(System.nanoTime() < deadline) { "no account was placed on the second node within a minute" }
            }
            val accounts = 200
            val rounds = 5
            val expected = LongArray(accounts)
            val nodesSeen = HashSet<String>()
            val lastNodeOf = HashMap<String, String>()
            val threadsByAccount = HashMap<String, MutableSet<String>>()
            for (round in 0 until rounds) {
                // Each round asks through the other node, alternately: a third of the asks cross the cluster.
                val via = nodes[round % 2]
                val amounts = (0 until accounts).map { i -> if (round == rounds - 1 && i % 3 == 0) -1_000L else (i + round).toLong() }
                val replies = amounts.mapIndexed { i, amount -> BankCluster.change(via, "account-$i", amount, timeout) }
                    .map { it.get(timeout.seconds * 2, TimeUnit.SECONDS) }
                replies.forEachIndexed { i, reply ->
                    val amount = amounts[i]
                    val refused = expected[i] + amount < 0
                    if (!refused) expected[i] += amount
                    assertEquals("account-$i", reply.accountId)
                    assertEquals(refused, reply.refused, "account-$i, round $round")
                    assertEquals(expected[i], reply.balance, "account-$i, round $round")
                    nodesSeen += reply.node
                    lastNodeOf[reply.accountId] = reply.node
                    threadsByAccount.getOrPut(reply.accountId) { HashSet() } += reply.thread
                }
            }
            assertEquals(ports.map { "${BankCluster.SYSTEM_NAME}@127.0.0.1:$it" }.toSet(), nodesSeen, "accounts live on both nodes")
            threadsByAccount.forEach { (account, threads) -> assertEquals(1, threads.size, "$account ran on $threads") }
            for (node in nodes) {
                val stats = StealingExecutorServiceConfigurator.dispatcherOf(node, "pekko.actor.default-dispatcher").stats()
                assertTrue(stats.affinityPops > 0, "${node.address()}: $stats")
                assertEquals(0L, stats.failed, stats.toString())
            }

            // The second node leaves (its system terminates: Pekko's coordinated shutdown leaves the
            // cluster and hands its shards off); its accounts start again on the first node and answer
            // there. The sample keeps no journal, so a moved account starts from a zero balance.
            val leaving = nodes[1]
            val moved = lastNodeOf.filterValues { it == second }.keys
            assertTrue(moved.isNotEmpty(), "some accounts lived on the second node")
            leaving.terminate()
            leaving.whenTerminated.toCompletableFuture().get(1, TimeUnit.MINUTES)
            BankCluster.awaitMembers(nodes[0], 1, Duration.ofMinutes(1))
            val staying = BankCluster.nodeName(nodes[0])
            for (account in moved) {
                val reply = BankCluster.change(nodes[0], account, 7, timeout).get(timeout.seconds * 2, TimeUnit.SECONDS)
                assertEquals(staying, reply.node, "$account moved to the node that stayed")
                assertEquals(7L, reply.balance, "$account starts again from zero on the node that stayed")
            }
        } finally {
            // One at a time: the second node leaves while the first is still there to see it go.
            for (node in nodes.reversed()) {
                node.terminate()
                node.whenTerminated.toCompletableFuture().get(1, TimeUnit.MINUTES)
            }
        }
    }

    private fun freePorts(n: Int): List<Int> {
        val sockets = (0 until n).map { ServerSocket(0) }
        return sockets.map { it.localPort }.also { sockets.forEach(ServerSocket::close) }
    }
}
