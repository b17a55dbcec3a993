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
 * ledger kept here, and both nodes' pools seen to run the work.
 */
class BankClusterTest {
    private val timeout = Duration.ofSeconds(30)

    @Test
    fun aTwoNodeClusterRunsItsAccountsOnBothNodesPools() {
        val ports = freePorts(2)
        val nodes = ports.map { BankCluster.start(BankCluster.config(it, listOf(ports[0]))) }
        try {
            for (node in nodes) BankCluster.awaitUp(node, 2, Duration.ofMinutes(2))
            val accounts = 200
            val rounds = 5
            val expected = LongArray(accounts)
            val nodesSeen = HashSet<String>()
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
