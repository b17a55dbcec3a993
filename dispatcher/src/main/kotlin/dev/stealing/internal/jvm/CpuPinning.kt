package dev.stealing.internal.jvm

import java.lang.reflect.InvocationTargetException
import java.lang.reflect.Method
import java.util.BitSet

/**
 * OS-level CPU pinning of core workers ([StealingOptions.pinThreads]), through OpenHFT's
 * `net.openhft:affinity` (JNA `sched_setaffinity` on Linux). Worker `i` is pinned to the
 * `i`-th CPU (modulo their number) of the set the pool's creator may use, so in a container
 * limited to some CPUs the workers stay inside that set. Extra threads are not pinned.
 *
 * `affinity` is called by reflection: its jar has no module name, and a `requires` of it in the
 * library's module descriptor would name a module derived from the jar's file name, which Maven
 * rightly warns against publishing. Reflection needs no `requires` (it reads any module, on the
 * module path or the class path), and the library runs without `affinity` when the option is off
 * ([isCpuPinningPresent] checks by name without loading this object).
 */
internal object CpuPinning {
    private val affinity: Class<*> = Class.forName(AFFINITY_CLASS, true, CpuPinning::class.java.classLoader)
    private val getAffinity: Method = affinity.getMethod("getAffinity")
    private val setAffinity: Method = affinity.getMethod("setAffinity", BitSet::class.java)
    private val getAffinityImpl: Method = affinity.getMethod("getAffinityImpl")

    /** Calls the static [method] of `Affinity`, rethrowing what it threw rather than a reflective wrapper. */
    private fun call(method: Method, vararg args: Any?): Any? = try {
        method.invoke(null, *args)
    } catch (e: InvocationTargetException) {
        throw e.cause ?: e
    }

    /**
     * The CPUs the calling thread may run on (read once, by the thread that creates the pool:
     * worker threads inherit the affinity of whoever started them, which may be a pinned worker).
     */
    fun allowedCpus(): BitSet = call(getAffinity) as BitSet

    /**
     * Pins the calling thread to the [workerIndex]-th CPU of [allowed] (modulo their number);
     * returns that CPU, or throws with the reason it could not (no native support, the OS
     * refused, the CPU set did not take).
     */
    fun pinCurrentThread(workerIndex: Int, allowed: BitSet): Int {
        check(!allowed.isEmpty) { "no CPU affinity support here (${call(getAffinityImpl)?.javaClass?.simpleName})" }
        var cpu = allowed.nextSetBit(0)
        repeat(workerIndex % allowed.cardinality()) { cpu = allowed.nextSetBit(cpu + 1) }
        call(setAffinity, BitSet().apply { set(cpu) })
        val now = allowedCpus()
        check(now.cardinality() == 1 && now.get(cpu)) { "the OS kept the affinity $now instead of CPU $cpu" }
        return cpu
    }
}

private const val AFFINITY_CLASS = "net.openhft.affinity.Affinity"

/** Whether `net.openhft:affinity` is on the class path or in the module graph (checked by name only). */
internal fun isCpuPinningPresent(): Boolean = try {
    Class.forName(AFFINITY_CLASS, false, CpuPinning::class.java.classLoader)
    true
} catch (e: ClassNotFoundException) {
    false
}
