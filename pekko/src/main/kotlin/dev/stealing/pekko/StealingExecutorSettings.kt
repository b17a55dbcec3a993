package dev.stealing.pekko

import com.typesafe.config.Config
import com.typesafe.config.ConfigException
import java.time.Duration
import kotlin.math.ceil

/**
 * The `stealing-executor` section of one dispatcher's config, read and checked. Each check
 * names the key it failed on, with the dispatcher's id, and an unreadable value (a word where a
 * number goes) is reported the same way, so a bad config fails when the dispatcher is created,
 * with a message that says where to look.
 */
internal class StealingExecutorSettings(
    /** Worker threads: the scaled parallelism, as Pekko's fork-join-executor computes it. */
    val parallelism: Int,
    /** The pool's name; blank: the actor system's name and the dispatcher's id. */
    val name: String,
    /** Each mailbox on one worker. */
    val affinity: Boolean,
    /** `scala.concurrent.blocking` inside an actor runs as a blocking region of its worker ([PoolBlockContext]). */
    val blockingContext: Boolean,
    /** Most threads alive at once; 0: the pool's default. */
    val maxThreads: Int,
    /** An extra thread's idle time before it retires; null: the pool's default. */
    val keepAlive: Duration?,
    /** How long a worker out of work keeps looking before it parks; null: the pool's default. */
    val spinRounds: Int?,
) {
    companion object {
        /** The section's name in a dispatcher's config. */
        const val SECTION = "stealing-executor"

        /**
         * Reads the section of [dispatcherConfig] (a dispatcher's config, which falls back to the
         * default dispatcher's and so to this module's reference.conf); [dispatcherId] is for messages.
         *
         * @throws IllegalArgumentException naming the key, if a value is missing, unreadable or out of range.
         */
        fun read(dispatcherConfig: Config, dispatcherId: String): StealingExecutorSettings {
            val reader = Reader(dispatcherConfig, dispatcherId)
            val min = reader.int("parallelism-min")
            reader.check("parallelism-min", min >= 1) { "must be at least 1, was $min" }
            val factor = reader.double("parallelism-factor")
            reader.check("parallelism-factor", factor > 0.0 && factor.isFinite()) { "must be a positive number, was $factor" }
            val max = reader.int("parallelism-max")
            reader.check("parallelism-max", max >= 1) { "must be at least 1, was $max" }
            val maxThreads = if (reader.has("max-threads")) reader.int("max-threads") else 0
            reader.check("max-threads", maxThreads >= 0) { "must be 0 (the pool's default) or more, was $maxThreads" }
            val keepAlive = if (reader.has("keep-alive")) reader.duration("keep-alive") else null
            reader.check("keep-alive", keepAlive == null || (!keepAlive.isNegative && !keepAlive.isZero)) {
                "must be positive, was $keepAlive"
            }
            val spinRounds = if (reader.has("spin-rounds")) reader.int("spin-rounds") else null
            reader.check("spin-rounds", spinRounds == null || spinRounds >= 0) { "must be 0 or more, was $spinRounds" }
            return StealingExecutorSettings(
                parallelism = scaledParallelism(min, factor, max, Runtime.getRuntime().availableProcessors()),
                name = reader.string("name"),
                affinity = reader.boolean("affinity"),
                blockingContext = reader.boolean("blocking-context"),
                maxThreads = maxThreads,
                keepAlive = keepAlive,
                spinRounds = spinRounds,
            )
        }

        /** Pekko's rule for `parallelism-*`: `ceil(processors x factor)`, raised to [min], then capped at [max]. */
        fun scaledParallelism(min: Int, factor: Double, max: Int, processors: Int): Int =
            minOf(maxOf(ceil(processors * factor).toInt(), min), max)
    }

    /** Reads keys of the section, turning the config library's exceptions into ones that name the dispatcher. */
    private class Reader(dispatcherConfig: Config, private val dispatcherId: String) {
        private val section: Config = try {
            dispatcherConfig.getConfig(SECTION)
        } catch (e: ConfigException) {
            throw IllegalArgumentException("dispatcher [$dispatcherId]: $SECTION: ${e.message}", e)
        }

        fun has(key: String): Boolean = section.hasPath(key)

        fun int(key: String): Int = read(key) { section.getInt(key) }

        fun double(key: String): Double = read(key) { section.getDouble(key) }

        fun string(key: String): String = read(key) { section.getString(key) }

        fun boolean(key: String): Boolean = read(key) { section.getBoolean(key) }

        fun duration(key: String): Duration = read(key) { section.getDuration(key) }

        inline fun check(key: String, ok: Boolean, message: () -> String) {
            require(ok) { "dispatcher [$dispatcherId]: $SECTION.$key ${message()}" }
        }

        private inline fun <T> read(key: String, get: () -> T): T = try {
            get()
        } catch (e: ConfigException) {
            throw IllegalArgumentException("dispatcher [$dispatcherId]: $SECTION.$key: ${e.message}", e)
        }
    }
}
