package dev.stealing.internal.jvm

import net.openhft.affinity.Affinity
import java.util.BitSet

/**
 * OS-level CPU pinning of core workers ([StealingOptions.pinThreads]), through OpenHFT's
 * `net.openhft:affinity` (JNA `sched_setaffinity` on Linux). Worker `i` is pinned to the
 * `i`-th CPU (modulo their number) of the set the pool's creator may use, so in a container
 * limited to some CPUs the workers stay inside that set. Extra threads are not pinned.
 *
 * Touched only when the option is on, so the library runs without `affinity` when it is off
 * ([isCpuPinningPresent] checks by name without loading this object).
 */
internal object CpuPinning {
    /**
     * The CPUs the calling thread may run on (read once, by the thread that creates the pool:
     * worker threads inherit the affinity of whoever started them, which may be a pinned worker).
     */
    fun allowedCpus(): BitSet = Affinity.getAffinity()

    /**
     * Pins the calling thread to the [workerIndex]-th CPU of [allowed] (modulo their number);
     * returns that CPU, or throws with the reason it could not (no native support, the OS
     * refused, the CPU set did not take).
     */
    fun pinCurrentThread(workerIndex: Int, allowed: BitSet): Int {
        check(!allowed.isEmpty) { "no CPU affinity support here (${Affinity.getAffinityImpl().javaClass.simpleName})" }
        var cpu = allowed.nextSetBit(0)
        repeat(workerIndex % allowed.cardinality()) { cpu = allowed.nextSetBit(cpu + 1) }
        Affinity.setAffinity(BitSet().apply { set(cpu) })
        val now = Affinity.getAffinity()
        check(now.cardinality() == 1 && now.get(cpu)) { "the OS kept the affinity $now instead of CPU $cpu" }
        return cpu
    }
}

/**
 * Whether `net.openhft:affinity` is on the class path or in the module graph (checked by name
 * only). When it is, the library's module is made to read it: on the module path a named module
 * reads no class-path code otherwise, even with `requires static`.
 */
internal fun isCpuPinningPresent(): Boolean = try {
    val affinity = Class.forName("net.openhft.affinity.Affinity", false, CpuPinning::class.java.classLoader)
    CpuPinning::class.java.module.addReads(affinity.module)
    true
} catch (e: ClassNotFoundException) {
    false
}
