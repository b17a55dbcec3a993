package dev.stealing.pekko

import dev.stealing.StealingDispatcher
import java.util.concurrent.AbstractExecutorService
import java.util.concurrent.TimeUnit

/**
 * The executor a Pekko dispatcher runs its mailboxes on: [dispatcher]'s executor, or with
 * [affinity] its keyed executor with the mailbox itself as the key (a mailbox's hash is its
 * identity, so each actor keeps one worker for its life, as on Pekko's affinity pool). Shutdown
 * is the pool's: tasks accepted before it still run; [unregister] runs once it is asked for.
 */
internal class PekkoExecutorService(
    private val dispatcher: StealingDispatcher,
    private val affinity: Boolean,
    private val unregister: () -> Unit,
) : AbstractExecutorService() {
    private val executor = dispatcher.executor

    override fun execute(command: Runnable) {
        if (affinity) dispatcher.affinityExecutor(command).execute(command) else executor.execute(command)
    }

    override fun shutdown() {
        unregister()
        executor.shutdown()
    }

    override fun shutdownNow(): List<Runnable> {
        unregister()
        return executor.shutdownNow()
    }

    override fun isShutdown(): Boolean = executor.isShutdown

    override fun isTerminated(): Boolean = executor.isTerminated

    override fun awaitTermination(timeout: Long, unit: TimeUnit): Boolean = executor.awaitTermination(timeout, unit)

    override fun toString(): String = "$dispatcher${if (affinity) " (affinity)" else ""}"
}
