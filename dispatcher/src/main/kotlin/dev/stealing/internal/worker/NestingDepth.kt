package dev.stealing.internal.worker

/**
 * Owner only: how deeply a worker is nested in tasks it runs inline or while helping a join
 * ([Worker.nested]), on a cache line no other object shares.
 *
 * The depth is written twice for every node of a fork/join tree, so it must not share a line
 * with anything another worker reads at every fork. Kept in `Worker` itself, it did on Temurin
 * 25: `Worker` is small there (184 bytes, `Thread`'s own fields having moved out), and the
 * collector copies the pool object, which every fork reads, right behind worker 0; a JVM whose
 * pool fields landed on the line of worker 0's depth ran the two-worker tree in 11-17 ms
 * instead of 7.5-8.5
 * (docs/investigations/2026-11-28-nesting-depth-on-a-line-of-its-own.md).
 *
 * The padding is by class hierarchy, because HotSpot lays out a superclass's fields before a
 * subclass's: 64 bytes of unused fields before [depth] and 64 after keep any neighbour's fields
 * off its line. The `Int` in the padding before fills the 4 bytes behind a 12-byte object header,
 * where the layout would otherwise put [depth] itself.
 */
internal class NestingDepth : NestingDepthField() {
    @Suppress("unused") private val after0 = 0L
    @Suppress("unused") private val after1 = 0L
    @Suppress("unused") private val after2 = 0L
    @Suppress("unused") private val after3 = 0L
    @Suppress("unused") private val after4 = 0L
    @Suppress("unused") private val after5 = 0L
    @Suppress("unused") private val after6 = 0L
    @Suppress("unused") private val after7 = 0L
}

/** [NestingDepth]'s field, between the two paddings. */
internal abstract class NestingDepthField : NestingDepthPaddingBefore() {
    /** Owner only: the nesting depth; 0 in a top-level task. */
    @JvmField var depth = 0
}

/** [NestingDepth]'s padding before its field. */
internal abstract class NestingDepthPaddingBefore {
    @Suppress("unused") private val headerGap = 0
    @Suppress("unused") private val before0 = 0L
    @Suppress("unused") private val before1 = 0L
    @Suppress("unused") private val before2 = 0L
    @Suppress("unused") private val before3 = 0L
    @Suppress("unused") private val before4 = 0L
    @Suppress("unused") private val before5 = 0L
    @Suppress("unused") private val before6 = 0L
    @Suppress("unused") private val before7 = 0L
}
