package dev.stealing

import dev.stealing.testsupport.stressMultiplier

/**
 * Run by [ParallelLoopsSpec] under `taskset -c 0`: the 10M ledgers of `parallelForEach` and
 * `parallelReduceToLong` on 2 and 4 workers sharing one CPU.
 */
object OneCpuLoopLedgerMain {
    @JvmStatic
    fun main(args: Array<String>) {
        val failures = listOf(2, 4).flatMap { p -> listOfNotNull(loopLedgerFailure(p, 2 * stressMultiplier), reduceLedgerFailure(p, 2 * stressMultiplier)).map { "$p workers: $it" } }
        println("cpus=${Runtime.getRuntime().availableProcessors()} " + if (failures.isEmpty()) "ok" else failures.joinToString("; "))
    }
}
