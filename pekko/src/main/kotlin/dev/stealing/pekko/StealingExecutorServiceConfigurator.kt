package dev.stealing.pekko

import com.typesafe.config.Config
import dev.stealing.StealingDispatcher
import dev.stealing.StealingOptions
import dev.stealing.TaskExceptionHandler
import org.apache.pekko.actor.ClassicActorSystemProvider
import org.apache.pekko.dispatch.DispatcherPrerequisites
import org.apache.pekko.dispatch.ExecutorServiceConfigurator
import org.apache.pekko.dispatch.ExecutorServiceFactory
import org.apache.pekko.dispatch.MonitorableThreadFactory
import org.apache.pekko.event.Logging
import scala.util.control.NonFatal
import java.util.concurrent.ExecutorService
import java.util.concurrent.ThreadFactory

/**
 * An Apache Pekko executor that runs a dispatcher's actors on a [StealingDispatcher]. Named in a
 * dispatcher's config, it needs no code, from Java or Scala:
 *
 * ```hocon
 * my-dispatcher {
 *   type = Dispatcher
 *   executor = "dev.stealing.pekko.StealingExecutorServiceConfigurator"
 *   stealing-executor {
 *     parallelism-min = 2      # as fork-join-executor: ceil(cores x factor) within min..max
 *     parallelism-factor = 1.0
 *     parallelism-max = 16
 *     affinity = on            # each actor's mailbox on one worker, as affinity-pool-executor
 *     # name = "accounts"      # thread-name prefix; default <system>-<dispatcher id>
 *     # max-threads = 64       # threads counting those started while workers block
 *     # keep-alive = 60s       # idle time before an extra thread retires
 *     # spin-rounds = 32       # how long a worker out of work looks before it parks
 *     # blocking-context = on  # scala.concurrent.blocking compensates (off: no wrapper per run)
 *   }
 *   throughput = 5
 * }
 * ```
 *
 * or as `pekko.actor.default-dispatcher.executor` for every actor of the system. The defaults
 * are in this module's `reference.conf`; a missing, unreadable or out-of-range value fails the
 * creation of the dispatcher with an `IllegalArgumentException` that names the dispatcher and
 * the key.
 *
 * Each dispatcher gets a pool of its own, created when the dispatcher first runs something.
 * Pekko shuts a dispatcher's executor down when the dispatcher has had no actors for its
 * `shutdown-timeout`, and when the actor system terminates; the pool then runs every task it
 * had accepted (no mailbox run is dropped) and its threads exit. A dispatcher used again after
 * that gets a new pool. The pool's `stats()` and Micrometer meters ([dev.stealing.StealingMetrics])
 * are reached through [dispatcherOf]. An actor's own failures are handled by its supervisor, not
 * here. A fatal error that escapes an actor (`OutOfMemoryError`, `LinkageError`: what Scala's
 * `NonFatal` does not match) goes to the actor system's handler of uncaught errors, as on
 * `fork-join-executor`: the system shuts down, or the JVM exits with
 * `pekko.jvm-exit-on-fatal-error = on`, Pekko's default. Any other exception that escapes a task
 * is published on the system's event stream as an error.
 *
 * Blocking inside an actor: `scala.concurrent.blocking { }` (Scala; with `blocking-context = on`,
 * the default), `StealingDispatcher.managedBlock` (Java) or `blocking { }` (Kotlin) lets another
 * thread run the other actors at once; an actor that blocks without saying so is
 * noticed by the pool's starvation monitor, which compensates after `starvationInterval`. With
 * `affinity = on`, mailboxes whose worker blocks wait for it, as keyed work does.
 *
 * @param config the dispatcher's config.
 * @param prerequisites what Pekko gives every dispatcher (event stream, settings).
 */
public class StealingExecutorServiceConfigurator(
    config: Config,
    private val prerequisites: DispatcherPrerequisites,
) : ExecutorServiceConfigurator(config, prerequisites) {
    private val settings = StealingExecutorSettings.read(config, config.getString("id"))

    /**
     * Pekko's factory for the dispatcher [id]'s executor: each executor it creates is a new
     * [StealingDispatcher]. The pool starts its own threads; of [threadFactory] (Pekko's, for the
     * system) it takes the name, the handler of uncaught errors and the context class loader
     * (the actor system's class loader, as on `fork-join-executor`; the system's dynamic-access
     * class loader if the factory has none), which the pool gives every thread it starts.
     */
    override fun createExecutorServiceFactory(id: String, threadFactory: ThreadFactory): ExecutorServiceFactory {
        val pekkoThreads = threadFactory as? MonitorableThreadFactory
        val name = settings.name.ifBlank { "${pekkoThreads?.name() ?: prerequisites.settings().name()}-$id" }
        val uncaught = pekkoThreads?.exceptionHandler()
        val loader = pekkoThreads?.contextClassLoader()?.takeIf { it.isDefined }?.get() ?: prerequisites.dynamicAccess().classLoader()
        return object : ExecutorServiceFactory {
            override fun createExecutorService(): ExecutorService = newExecutorService(id, name, uncaught, loader)
        }
    }

    /**
     * A task's failure. Pekko handles an actor's exceptions itself, and a task's non-fatal ones
     * (`TaskInvocation`), so what escapes to the executor is mostly fatal: an `Error` such as
     * `OutOfMemoryError` or `LinkageError` (not `NonFatal`). On `fork-join-executor` that goes from
     * the worker thread to the system's uncaught-error handler, which shuts the actor system down
     * (or the JVM, with `pekko.jvm-exit-on-fatal-error`); here it goes to the same handler, [uncaught],
     * and the worker lives on. A non-fatal one is published on the event stream as an error.
     */
    private fun failureHandler(name: String, uncaught: Thread.UncaughtExceptionHandler?): TaskExceptionHandler {
        val eventStream = prerequisites.eventStream()
        val logSource = "StealingExecutor($name)"
        return TaskExceptionHandler { task, e ->
            if (uncaught != null && !NonFatal.apply(e)) {
                uncaught.uncaughtException(Thread.currentThread(), e)
            } else {
                eventStream.publish(Logging.Error(e, logSource, StealingExecutorServiceConfigurator::class.java, "task $task failed"))
            }
        }
    }

    private fun newExecutorService(id: String, name: String, uncaught: Thread.UncaughtExceptionHandler?, loader: ClassLoader): ExecutorService {
        var options = StealingOptions.DEFAULT
            .withDaemon(prerequisites.settings().Daemonicity())
            .withMaxThreads(settings.maxThreads)
            .withExceptionHandler(failureHandler(name, uncaught))
        settings.keepAlive?.let { options = options.withKeepAlive(it) }
        settings.spinRounds?.let { options = options.withSpinRounds(it) }
        val dispatcher = createdWithContextClassLoader(loader) { StealingDispatcher(settings.parallelism, name, options) }
        return PekkoExecutorService(dispatcher, settings.affinity, settings.blockingContext, PoolRegistry.register(prerequisites, id, dispatcher))
    }

    /**
     * Runs [create] with [loader] as this thread's context class loader: a pool gives the threads
     * it starts the context class loader of the thread that created it.
     */
    private inline fun <T> createdWithContextClassLoader(loader: ClassLoader, create: () -> T): T {
        val thread = Thread.currentThread()
        val before = thread.contextClassLoader
        thread.contextClassLoader = loader
        try {
            return create()
        } finally {
            thread.contextClassLoader = before
        }
    }

    public companion object {
        /**
         * The pool that runs the actors of the dispatcher [dispatcherId] of [system], for its
         * `stats()` or to bind `StealingMetrics` to it: the newest one, if the dispatcher was shut
         * down and used again.
         *
         * @param system the actor system (typed or classic).
         * @param dispatcherId the dispatcher's id, as in `DispatcherSelector.fromConfig(id)`.
         * @throws IllegalStateException if the dispatcher has not run anything yet, its pool was
         *   shut down, or it does not run on this executor (Pekko's own `ConfigurationException`
         *   if the system has no dispatcher [dispatcherId]).
         */
        @JvmStatic
        public fun dispatcherOf(system: ClassicActorSystemProvider, dispatcherId: String): StealingDispatcher {
            val dispatcher = system.classicSystem().dispatchers().lookup(dispatcherId)
            return PoolRegistry.find(dispatcher.configurator().prerequisites(), dispatcherId)
                ?: throw IllegalStateException(
                    "dispatcher [$dispatcherId] has no running StealingDispatcher: it has not run anything yet, " +
                        "its pool was shut down, or its executor is not ${StealingExecutorServiceConfigurator::class.java.name}",
                )
        }
    }
}
