package dev.stealing.pekko

import dev.stealing.StealingDispatcher
import org.apache.pekko.dispatch.DispatcherPrerequisites
import java.util.concurrent.ConcurrentHashMap

/**
 * The running pools of the configurator's dispatchers, by actor system and dispatcher id, for
 * [StealingExecutorServiceConfigurator.dispatcherOf]. An actor system is told apart by its
 * [DispatcherPrerequisites] (one object per system, compared by identity: its `equals` compares
 * contents). A pool leaves when its executor shuts down, so a terminated system leaves nothing.
 */
internal object PoolRegistry {
    private class Key(val prerequisites: DispatcherPrerequisites, val dispatcherId: String) {
        override fun equals(other: Any?): Boolean =
            other is Key && other.prerequisites === prerequisites && other.dispatcherId == dispatcherId

        override fun hashCode(): Int = System.identityHashCode(prerequisites) * 31 + dispatcherId.hashCode()
    }

    private val pools = ConcurrentHashMap<Key, StealingDispatcher>()

    /** Records [dispatcher] as the pool of [dispatcherId]; returns what removes it again (if it is still the one recorded). */
    fun register(prerequisites: DispatcherPrerequisites, dispatcherId: String, dispatcher: StealingDispatcher): () -> Unit {
        val key = Key(prerequisites, dispatcherId)
        pools[key] = dispatcher
        return { pools.remove(key, dispatcher) }
    }

    fun find(prerequisites: DispatcherPrerequisites, dispatcherId: String): StealingDispatcher? =
        pools[Key(prerequisites, dispatcherId)]
}
