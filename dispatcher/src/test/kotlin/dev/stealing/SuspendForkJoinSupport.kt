package dev.stealing

/** Fibonacci with a `forkJoin` per node, for SuspendForkJoinSpec and SuspendForkJoinContextSpec. */
internal suspend fun fjFib(n: Int): Long = if (n < 2) n.toLong() else {
    val (a, b) = forkJoin({ fjFib(n - 1) }, { fjFib(n - 2) })
    a + b
}
