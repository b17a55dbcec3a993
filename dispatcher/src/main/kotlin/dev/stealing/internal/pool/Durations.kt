package dev.stealing.internal.pool

import java.time.Duration

/**
 * [duration] in nanoseconds, or Long.MAX_VALUE ("never") if it is longer than about 73 years
 * (where nanosecond arithmetic on deadlines would overflow).
 */
internal fun nanosOrNever(duration: Duration): Long =
    if (duration.seconds >= Long.MAX_VALUE / 4 / 1_000_000_000) Long.MAX_VALUE else duration.toNanos()
