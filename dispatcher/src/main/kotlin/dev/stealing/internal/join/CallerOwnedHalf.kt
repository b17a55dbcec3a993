package dev.stealing.internal.join

/**
 * A fork/join half on a deque that its caller takes back if nobody claimed it: `forkJoin`'s
 * [ForkHalf] and the blocking fork/join's [JoinHalf]. A pool that stops drops such an entry
 * instead of handing it back or cancelling it: its caller, still running, finds it unclaimed
 * and runs it itself (or finds a dead entry it had already taken back).
 */
internal interface CallerOwnedHalf : Runnable
