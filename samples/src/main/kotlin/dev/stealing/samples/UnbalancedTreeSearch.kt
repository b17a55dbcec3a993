package dev.stealing.samples

import kotlinx.coroutines.Deferred
import kotlinx.coroutines.async
import kotlinx.coroutines.coroutineScope

/**
 * Unbalanced Tree Search (UTS, after the benchmark of Olivier et al.): counts the nodes of a
 * binomial tree that exists only implicitly. Every node has a 64-bit id; the id of child i is a
 * SplitMix64 hash of the parent's id and i, and decides that child's number of children: the root
 * has 2,000, every other node 8 with probability 0.12475 and none otherwise. With 8 x 0.12475 =
 * 0.998 just below 1 the tree is finite (1,066,273 nodes for seed 22, 830 levels deep) but wildly
 * unbalanced: of the root's 2,000 subtrees, 1,773 are single leaves and one holds 862,921 nodes.
 * None of this is known before exploring it, so the work can only be balanced at run time, by
 * stealing. One `async` per child, joined with `awaitInline` (or plain `await`); checks the
 * parallel count against a sequential one and compares `StealingDispatcher` with
 * `Dispatchers.Default`.
 *
 * The work per node is one hash, a few nanoseconds, so this measures the cost of scheduling a
 * million coroutines: the sequential count is far faster. A real search does more per node (UTS
 * itself computes a SHA-1 per child) or stops spawning below some size.
 *
 * Run: `mvn -q -pl samples -am compile exec:java -Dexec.mainClass=dev.stealing.samples.UnbalancedTreeSearchKt`
 */
fun main() {
    val tree = BinomialTree(seed = 22, rootChildren = 2_000, branching = 8, probability = 0.12475)
    val expected = tree.countSequential()
    // Computed independently (by a Python transcription of the same hash) for these parameters.
    if (expected != 1_066_273L) fail("sequential count $expected, expected 1,066,273")
    val subtrees = tree.rootSubtreeSizes()
    if (subtrees.sum() + 1 != expected) fail("root subtrees sum to ${subtrees.sum()} nodes, expected ${expected - 1}")
    println("UTS binomial tree (root 2,000 children, then 8 with p = 0.12475): %,d nodes; root subtrees: %,d leaves, largest %,d nodes (%.0f%%)"
        .format(expected, subtrees.count { it == 1L }, subtrees.max(), 100.0 * subtrees.max() / expected))
    println("one async per child, ${roundsNote(WARM_UP)}")
    compareDispatchers(
        warmUp = WARM_UP,
        sequential = "sequential, one thread" to { tree.countSequential() },
        check = { nodes -> if (nodes != expected) "counted $nodes nodes, expected $expected" else null },
    ) { inline -> tree.countParallel(inline) }
    println("checked: %,d nodes in every run".format(expected))
}

/** A run starts a million coroutines, about a second each on 2 cores: two warm-up rounds suffice. */
private const val WARM_UP = 2

private class BinomialTree(seed: Long, val rootChildren: Int, val branching: Int, probability: Double) {
    private val rootId = splitMix64(seed)

    /** A node has children when the top 53 bits of its id, as a fraction of 1, are below the probability. */
    private val threshold = (probability * (1L shl 53)).toLong()

    private fun childCount(id: Long): Int = if ((id ushr 11) < threshold) branching else 0

    /** Child [i] of node [id]: the i-th output of a SplitMix64 generator seeded with the parent's id. */
    private fun childId(id: Long, i: Int): Long = splitMix64(id + i * GOLDEN_GAMMA)

    suspend fun countParallel(inline: Boolean): Long = count(rootId, rootChildren, inline)

    /** Nodes in the subtree of [id] (with [children] children): one `async` per child. */
    private suspend fun count(id: Long, children: Int, inline: Boolean): Long {
        if (children == 0) return 1
        return coroutineScope {
            val subtrees = arrayOfNulls<Deferred<Long>>(children)
            for (i in 0 until children) {
                val child = childId(id, i)
                subtrees[i] = async { count(child, childCount(child), inline) }
            }
            // Newest first: that is the child on top of this worker's deque, which awaitInline
            // takes back and runs right here unless a thief took it.
            var nodes = 1L
            for (i in children - 1 downTo 0) nodes += subtrees[i]!!.awaitWith(inline)
            nodes
        }
    }

    fun countSequential(): Long = countSequential(rootId, rootChildren)

    /** The node count of each of the root's subtrees. */
    fun rootSubtreeSizes(): LongArray = LongArray(rootChildren) { i ->
        val child = childId(rootId, i)
        countSequential(child, childCount(child))
    }

    /** Depth-first with an explicit stack of node ids (the tree is hundreds of levels deep). */
    private fun countSequential(id: Long, children: Int): Long {
        var stack = LongArray(maxOf(1024, children))
        var top = 0
        var nodes = 1L
        for (i in 0 until children) stack[top++] = childId(id, i)
        while (top > 0) {
            val node = stack[--top]
            nodes++
            val n = childCount(node)
            if (top + n > stack.size) stack = stack.copyOf((top + n) * 2)
            for (i in 0 until n) stack[top++] = childId(node, i)
        }
        return nodes
    }
}
