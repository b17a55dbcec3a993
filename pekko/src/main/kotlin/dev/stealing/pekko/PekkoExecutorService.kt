package dev.stealing.pekko

import dev.stealing.StealingDispatcher
import java.util.concurrent.AbstractExecutorService
import java.util.concurrent.TimeUnit

/**
 * The executor a Pekko dispatcher runs its mailboxes on: [dispatcher]'s executor, or with
 * [affinity] its keyed executor with the mailbox itself as the key (a mailbox's hash is its
 * identity, so each actor keeps one worker for its life, as on Pekko's affinity pool). With
 * [blockingContext] each run is wrapped in a [MailboxRun], so that `scala.concurrent.blocking`
 * inside an actor compensates ([PoolBlockContext]). Shutdown is the pool's: tasks accepted
 * before it still run; [unregister] runs once it is asked for.
 */
internal class PekkoExecutorService(
    private val dispatcher: StealingDispatcher,
    private val affinity: Boolean,
    private val blockingContext: Boolean,
    private val unregister: () -> Unit,
) : AbstractExecutorService() {
    private val executor = dispatcher.executor

    override fun execute(command: Runnable) {
        val run = if (blockingContext) MailboxRun(command) else command
        if (affinity) dispatcher.affinityExecutor(command).execute(run) else executor.execute(run)
    }

    override fun shutdown() {
        unregister()
        executor.shutdown()
    }

    /** The runs that never started, as Pekko gave them (its mailboxes, not our wrappers). */
    override fun shutdownNow(): List<Runnable> {
        unregister()
        return executor.shutdownNow().map { (it as? MailboxRun)?.mailbox ?: it }
    }

    override fun isShutdown(): Boolean = executor.isShutdown

    override fun isTerminated(): Boolean = executor.isTerminated

    override fun awaitTermination(timeout: Long, unit: TimeUnit): Boolean = executor.awaitTermination(timeout, unit)

    override fun toString(): String = "$dispatcher${if (affinity) " (affinity)" else ""}"
}
