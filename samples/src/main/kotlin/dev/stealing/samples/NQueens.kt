package dev.stealing.samples

import kotlinx.coroutines.Deferred
import kotlinx.coroutines.async
import kotlinx.coroutines.coroutineScope

/**
 * Counts the solutions of the N-Queens puzzle (n = 12: 14,200) by backtracking over bit masks,
 * with nested parallelism: in the first rows every safe placement of a queen is explored in its
 * own `async` child (a child of the placement above it), below that depth sequentially. Checks
 * the count against the known values and compares `StealingDispatcher` (with `awaitInline` and
 * plain `await`) with `Dispatchers.Default`.
 *
 * Optional arguments: `n` (1..16, default 12) and the parallel depth (default 3: 878 coroutines
 * per solve for n = 12, each exploring about a thousand boards), e.g. `-Dexec.args="12 4"` for a
 * finer grain (4,958 coroutines per solve), where the scheduler's own cost starts to show.
 *
 * Run: `mvn -q -pl samples -am compile exec:java -Dexec.mainClass=dev.stealing.samples.NQueensKt`
 */
fun main(args: Array<String>) {
    val n = args.getOrNull(0)?.toInt() ?: 12
    val depth = args.getOrNull(1)?.toInt() ?: 3
    require(n in 1 until KNOWN_COUNTS.size) { "n must be in 1..${KNOWN_COUNTS.size - 1}" }
    val expected = KNOWN_COUNTS[n]
    val queens = NQueens(n, depth)
    val tasks = queens.taskCount()
    println("%d-Queens, async per placement in the first %d rows (%,d coroutines per solve), %d solves per round, %s"
        .format(n, depth, tasks, SOLVES_PER_ROUND, roundsNote()))
    compareDispatchers(
        sequential = "sequential, one thread" to { LongArray(SOLVES_PER_ROUND) { queens.countSequential() } },
        check = { counts -> counts.firstOrNull { it != expected }?.let { "counted $it solutions, expected $expected" } },
    ) { inline -> LongArray(SOLVES_PER_ROUND) { queens.countParallel(inline) } }
    println("checked: %,d solutions for n = %d in every solve".format(expected, n))
}

/** One solve of n = 12 takes only milliseconds, so a timed round repeats it this many times. */
private const val SOLVES_PER_ROUND = 50

/** Number of solutions for n = 0..16 (OEIS A000170). */
private val KNOWN_COUNTS = longArrayOf(
    1, 1, 0, 0, 2, 10, 4, 40, 92, 352, 724, 2_680, 14_200, 73_712, 365_596, 2_279_184, 14_772_512,
)

/**
 * The board of the rows placed so far is three bit masks: the columns taken, and the columns
 * attacked in the next row along each diagonal (shifted by one per row).
 */
private class NQueens(val n: Int, val parallelDepth: Int) {
    private val full = (1 shl n) - 1

    fun countSequential(): Long = count(0, 0, 0)

    suspend fun countParallel(inline: Boolean): Long = count(0, 0, 0, 0, inline)

    /** Counts the completions of a board, in parallel for placements in rows < [parallelDepth]. */
    private suspend fun count(row: Int, cols: Int, diag1: Int, diag2: Int, inline: Boolean): Long {
        if (row >= parallelDepth || cols == full) return count(cols, diag1, diag2)
        return coroutineScope {
            val children = ArrayList<Deferred<Long>>(n)
            var free = full and (cols or diag1 or diag2).inv()
            while (free != 0) {
                val bit = free and -free
                free = free xor bit
                children += async { count(row + 1, cols or bit, (diag1 or bit) shl 1, (diag2 or bit) ushr 1, inline) }
            }
            // Newest first: the latest child is on top of this worker's deque, so awaitInline
            // finds it where a pop would, while thieves take the oldest from the other end.
            var total = 0L
            for (i in children.indices.reversed()) total += children[i].awaitWith(inline)
            total
        }
    }

    /** Sequential backtracking: counts the completions of the board. */
    private fun count(cols: Int, diag1: Int, diag2: Int): Long {
        if (cols == full) return 1
        var total = 0L
        var free = full and (cols or diag1 or diag2).inv()
        while (free != 0) {
            val bit = free and -free // the lowest free column
            free = free xor bit
            total += count(cols or bit, (diag1 or bit) shl 1, (diag2 or bit) ushr 1)
        }
        return total
    }

    /** How many `async` children one parallel solve starts (safe placements in the first rows). */
    fun taskCount(row: Int = 0, cols: Int = 0, diag1: Int = 0, diag2: Int = 0): Long {
        if (row >= parallelDepth || cols == full) return 0
        var tasks = 0L
        var free = full and (cols or diag1 or diag2).inv()
        while (free != 0) {
            val bit = free and -free
            free = free xor bit
            tasks += 1 + taskCount(row + 1, cols or bit, (diag1 or bit) shl 1, (diag2 or bit) ushr 1)
        }
        return tasks
    }
}
