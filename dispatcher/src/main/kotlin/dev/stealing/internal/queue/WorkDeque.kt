package dev.stealing.internal.queue

import dev.stealing.internal.jvm.fieldHandle
import java.lang.invoke.VarHandle

/**
 * A per-worker Chase-Lev work-stealing deque (Chase and Lev, SPAA'05) with the C11 memory
 * ordering of Lê, Pop, Cohen and Zappa Nardelli, "Correct and Efficient Work-Stealing for Weak
 * Memory Models" (PPoPP'13), translated to VarHandle access modes. `docs/deque.md` has the
 * argument in full. It holds plain [Runnable]s and knows nothing of what they are: a removal
 * is told what to look for by a [TaskMatcher].
 *
 * Layout: a ring buffer `array` indexed by the unbounded counters `top` (thief end, oldest task)
 * and `bottom` (owner end, newest task). Slots `[top, bottom)` hold tasks.
 *
 * Who may call what:
 * - the owner (one thread, the worker that the deque belongs to): [push], [pop], [popIfNewest],
 *   [tryRemove], [pollOldest]. None of them takes a lock; [push] does no CAS at all, [pop] does
 *   a CAS only when it races thieves for the last task. With assertions enabled (`-ea`) each of
 *   them asserts that it runs on the owner thread ([OwnerThreadCheck]).
 * - any thread: [steal], [size], [isEmpty].
 *
 * The invariants (every task pushed is taken exactly once, by the CAS on `top` where contested;
 * the array only grows and is published before the `bottom` store that exposes a slot in it;
 * only the owner writes slots), [tryRemove]'s hiding of the suffix above its target (after which
 * the owner must publish again: [Removal.mustRepublish]) and `hidings`, which makes a thief
 * that may have seen a lowered `bottom` answer [StealResult.RETRY] instead of
 * [StealResult.EMPTY], are argued in `docs/deque.md`.
 */
internal class WorkDeque(
    initialCapacity: Int = INITIAL_CAPACITY,
    /**
     * The thread allowed to call the owner operations, checked by assertions only. Null binds
     * the deque to the first thread that calls one (tests that drive a deque from one thread
     * they do not construct it on).
     */
    owner: Thread? = null,
    /**
     * Whether the owner operations check their thread when assertions are enabled. False only
     * for the Lincheck model, which confines the owner operations itself and would otherwise
     * interleave the check's reads too (it made the model check about three times slower).
     */
    checksOwner: Boolean = true,
) {
    init {
        require(initialCapacity >= 2 && initialCapacity and (initialCapacity - 1) == 0) {
            "initialCapacity must be a power of two >= 2, was $initialCapacity"
        }
    }

    /** The owner operations' assertion ([assertOwner]); null when they check no thread. */
    private val ownerCheck: OwnerThreadCheck? = if (checksOwner) OwnerThreadCheck(owner, "WorkDeque") else null

    /** Index of the oldest task; advanced only by CAS. Accessed through [TOP]. */
    @Suppress("unused") private var top: Long = 0

    /** One past the newest task; written only by the owner. Accessed through [BOTTOM]. */
    @Suppress("unused") private var bottom: Long = 0

    /**
     * Odd while [tryRemove] has `bottom` lowered below queued tasks, even otherwise: a seqlock
     * count, raised by one when a removal lowers `bottom` and again when it restores it. Written
     * only by the owner; read by [steal] around its read of `bottom`. Accessed through [HIDINGS].
     */
    @Suppress("unused") private var hidings: Int = 0

    /**
     * The ring. Volatile so that a thief's read after its acquire of `bottom` cannot see an
     * array older than the one the owner published before that `bottom` store (growth only).
     */
    @Volatile private var array: Array<Runnable?> = arrayOfNulls(initialCapacity)

    /** Owner only. Pushes [task]; no lock, no CAS. */
    fun push(task: Runnable) {
        assertOwner()
        val b = BOTTOM.get(this) as Long // plain: only the owner writes bottom
        val t = TOP.getAcquire(this) as Long // pairs with the CAS on top in steal()/pop()
        var a = array
        if (b - t > a.size - 1) a = grow(a, t, b)
        a[slot(a, b)] = task // plain: published by the release store below
        BOTTOM.setRelease(this, b + 1) // pairs with getAcquire of bottom in steal()
    }

    /**
     * Owner only, after a [push] and a full fence: whether a task older than the newest is still
     * queued. Read after the fence, so whoever takes that task later sees the push too: a fork
     * then skips its read of ctl (docs/parking.md, "Forks onto a non-empty deque").
     */
    fun holdsTaskBelowNewest(): Boolean {
        assertOwner()
        val b = BOTTOM.get(this) as Long // plain: only the owner writes bottom
        // Volatile, after the caller's fence; pairs with the CASes on top (steal(), pollOldest(),
        // takeNewest()) and the reads of top, then bottom, in size() and steal().
        return (TOP.getVolatile(this) as Long) < b - 1
    }

    /** Owner only. Pops the newest task, or returns null when empty (or the last task was stolen). */
    fun pop(): Runnable? {
        assertOwner()
        val b = BOTTOM.get(this) as Long // plain: only the owner writes bottom
        // Empty without the fence of takeNewest(): top only grows, so a top read at or above
        // bottom (which only this thread moves) proves the deque empty now, however stale the
        // read. A stale lower value just takes the full path. The worker loop pops an empty
        // deque before every look elsewhere, so this saves a full fence each time.
        // Opaque, no pairing needed for the emptiness test: the CASes on top in
        // steal()/pollOldest() only raise it, and coherence keeps this thread's reads of top from
        // going backwards. clearTaken() adds the acquire it needs (its fence).
        if (TOP.getOpaque(this) as Long >= b) {
            if (clearedBelow < b) clearTaken(b)
            return null
        }
        val a = array
        // Only the owner writes slots, so this read needs no ordering; if the deque turns out to
        // be empty it may be null or a stale copy, and takeNewest() then fails.
        val task = a[slot(a, b - 1)]
        return if (takeNewest(a, b)) task else null
    }

    /**
     * Owner only. Pops the newest task if it is [target] (the common join: the task forked last
     * is joined first) and returns whether it did; otherwise changes nothing. This is [pop], so
     * it hides no other task. A stale slot that still holds [target] after a steal is refused by
     * the read of `top` after the fence, as [pop] refuses an empty deque.
     */
    fun popIfNewest(target: Runnable): Boolean {
        assertOwner()
        val b = BOTTOM.get(this) as Long
        val a = array
        return a[slot(a, b - 1)] === target && takeNewest(a, b)
    }

    /**
     * Owner only. [popIfNewest] for a target that [matcher] recognises (a coroutine's job):
     * pops and returns the newest task if [matcher] accepts it for [target], else changes
     * nothing and returns null. This is [pop], so it hides no other task and needs no
     * re-publishing; a removal that must look further down is [tryRemove].
     */
    fun popNewestIf(target: Any, matcher: TaskMatcher): Runnable? {
        assertOwner()
        val b = BOTTOM.get(this) as Long
        val a = array
        val task = a[slot(a, b - 1)] ?: return null // stale if empty: takeNewest() refuses it
        return if (matcher.matches(task, target) && takeNewest(a, b)) task else null
    }

    /**
     * The Chase-Lev pop of slot `b0 - 1`: true if the owner now owns it (and has cleared it),
     * false if the deque was empty or a thief won the last task. Inline, so that [pop] (the
     * worker loop, where the deque often runs empty) and [popIfNewest] (a join, where it rarely
     * does) are compiled with their own branch profiles.
     */
    @Suppress("NOTHING_TO_INLINE")
    private inline fun takeNewest(a: Array<Runnable?>, b0: Long): Boolean {
        val b = b0 - 1
        // Release (not opaque): a thief that acquires this lowered value must still see the
        // slots below it, which were published by earlier release stores of bottom.
        BOTTOM.setRelease(this, b)
        // Store-load barrier: the bottom store above must be visible before top is read below.
        // Pairs with the fullFence in steal() between its reads of top and bottom.
        VarHandle.fullFence()
        val t = TOP.getOpaque(this) as Long
        if (t > b) { // empty
            BOTTOM.setRelease(this, b0)
            return false
        }
        if (t == b) { // last task: race the thieves for it
            val won = TOP.compareAndSet(this, t, t + 1) // pairs with the CAS in steal()
            BOTTOM.setRelease(this, b0)
            return won
        }
        a[slot(a, b)] = null // slot b is ours alone: no thief can win index b while top < b
        return true
    }

    /**
     * Any thread. Takes the oldest task. [StealResult.RETRY] means a concurrent pop/steal won
     * the race, or a concurrent [tryRemove] may be hiding tasks, so the deque may still hold
     * tasks: never read it as empty.
     */
    fun steal(): StealResult {
        val t = TOP.getAcquire(this) as Long // pairs with the CAS on top by other thieves/owner
        // Load-load barrier ordering the top read before the bottom read; pairs with the
        // fullFence in pop()/tryRemove() so a thief and the owner never both take slot t.
        VarHandle.fullFence()
        // Read before bottom, re-read after: see hidEmpty(). Acquire pairs with the release
        // store that ends a removal's hiding in removeAt().
        val h = HIDINGS.getAcquire(this) as Int
        // Pairs with setRelease of bottom in push(), and with the lowering one in hideAndRemove()
        // (which carries the odd count of hidings).
        val b = BOTTOM.getAcquire(this) as Long
        if (t >= b) return if (hidEmpty(h)) StealResult.RETRY else StealResult.EMPTY
        val a = array // volatile read after the acquire above: at least the array that holds slot t
        val task = a[slot(a, t)]
        // A stale slot read is harmless: if the slot was reused, top has moved and the CAS fails.
        if (!TOP.compareAndSet(this, t, t + 1)) return StealResult.RETRY
        return StealResult.success(task!!)
    }

    /**
     * For [steal], which read `hidings` as [before] and then `bottom` at or below `top`: whether
     * that `bottom` may have been lowered by a removal in progress, so the deque may hold tasks
     * after all. The removal's odd store precedes its release store of the lowered `bottom`, so
     * a thief that acquired the lowered value reads an odd count or a later one here. If both
     * reads give the same even count, the first of them already saw the release store that
     * ended every hiding up to then, which follows the restoring store of `bottom`, and the
     * `bottom` read after it cannot have returned a lowered value.
     */
    private fun hidEmpty(before: Int): Boolean =
        before and 1 != 0 || HIDINGS.getAcquire(this) as Int != before // pairs with removeAt()'s stores

    /**
     * Owner only. Takes the oldest task: for fairness within the owner's own deque (so a task at
     * the bottom of a busy LIFO deque is not starved), and the FIFO take of a yield queue.
     * Retries lost races itself.
     *
     * [steal] without its fence: that fence orders a thief's read of `top` before its read of
     * `bottom` against a concurrent [pop] by the owner, and here the owner is the caller, so no
     * pop runs meanwhile. `bottom`, `array` and the slot are this thread's own writes. Thieves
     * race for slot `t` only through the CAS on `top` (sequentially consistent), which decides.
     */
    fun pollOldest(): Runnable? {
        assertOwner()
        while (true) {
            val t = TOP.getAcquire(this) as Long // pairs with the CAS on top by thieves
            val b = BOTTOM.get(this) as Long // plain: only the owner writes bottom
            if (t >= b) {
                if (clearedBelow < b) clearTaken(b)
                return null
            }
            val a = array
            val i = slot(a, t)
            val task = a[i] // written by this thread's push; never a stale copy while top == t
            if (TOP.compareAndSet(this, t, t + 1)) {
                // Slot t is ours: clear it, or a yield queue (taken only from this end) would keep
                // every finished coroutine alive until its slot is reused. A thief that still
                // reads it fails its CAS on t; only this thread writes slots.
                a[i] = null
                return task
            }
        }
    }

    /**
     * Owner only. Finds the newest queued task for which [matcher] says yes to [target] and
     * removes it, wherever it is in the deque. [matcher] is a singleton (no lambda is allocated
     * per call), called on the owner thread for the queued tasks from the newest down to the
     * first match; it must not touch the deque.
     *
     * The result is a value (an inline class, nothing is allocated):
     * - [Removal.task]: the removed task, or null when no queued task matched (never pushed,
     *   already taken, or stolen during the removal);
     * - [Removal.mustRepublish]: the caller must now publish the deque again, exactly as after a
     *   push (full fence, then signal idle workers), because the removal may have hidden other
     *   queued tasks from thieves and re-scans for a moment. True for every removal that took a
     *   task (conservatively: one reference cannot carry the task and a flag without allocating,
     *   so a take of the newest task, a pop that hides nothing, asks too; a caller that expects
     *   its target to be the newest pops it with [popNewestIf] first), and for a failed one that
     *   had hidden tasks above the match before finding it stolen.
     */
    fun tryRemove(target: Any, matcher: TaskMatcher): Removal {
        assertOwner()
        val b = BOTTOM.get(this) as Long
        val a = array
        val t0 = TOP.getOpaque(this) as Long // a lower bound for the scan; re-checked below
        var i = b - 1
        while (i >= t0) {
            val x = a[slot(a, i)]
            if (x != null && matcher.matches(x, target)) break
            i--
        }
        if (i < t0) return Removal.NONE
        return removeAt(a, i, b)
    }

    private fun removeAt(a: Array<Runnable?>, i: Long, b: Long): Removal {
        if (i == b - 1) return hideAndRemove(a, i, b) // the newest: a pop, which hides nothing else
        val h = HIDINGS.get(this) as Int // plain: only the owner writes it
        // Odd before the lowering store in hideAndRemove(), whose release publishes it to a
        // thief that acquires the lowered bottom (hidEmpty()).
        HIDINGS.setOpaque(this, h + 1)
        try {
            return hideAndRemove(a, i, b)
        } finally {
            // Even again after the store that restored bottom (release: a thief that acquires
            // this count cannot then read the lowered bottom; pairs with the acquires in
            // steal()). In a finally: a count left odd would make every empty steal a Retry.
            HIDINGS.setRelease(this, h + 2)
        }
    }

    /** [removeAt] between the two stores of `hidings`. */
    private fun hideAndRemove(a: Array<Runnable?>, i: Long, b: Long): Removal {
        BOTTOM.setRelease(this, i) // hide [i, b) from thieves; release as in pop()
        // Store-load barrier, as in pop(): pairs with the fullFence in steal().
        VarHandle.fullFence()
        val t = TOP.getOpaque(this) as Long
        val task = a[slot(a, i)]!! // the scan saw it; only the owner writes slots
        if (t < i) {
            // [i, b) is ours alone: close the gap by shifting the newer tasks down one slot.
            var j = i
            while (j < b - 1) {
                a[slot(a, j)] = a[slot(a, j + 1)]
                j++
            }
            a[slot(a, b - 1)] = null
            BOTTOM.setRelease(this, b - 1) // publishes the shifted slots; pairs with steal()
            return Removal.removed(task)
        }
        if (t == i && TOP.compareAndSet(this, t, t + 1)) { // pairs with the CAS in steal()
            // Won slot i, the oldest; the tasks above it stay where they are.
            BOTTOM.setRelease(this, b)
            return Removal.removed(task)
        }
        BOTTOM.setRelease(this, b) // slot i was stolen; restore the suffix
        // Tasks above i, if any, were hidden while bottom was i.
        return if (b - 1 > i) Removal.MISSED_AFTER_HIDING else Removal.NONE
    }

    /**
     * Owner only. If the deque is empty, clears the slots of the tasks taken since the last
     * clearing ([clearTaken]); for a worker about to go idle, which may have last seen its
     * deque empty on a path that does not clear (a lost race for the last task).
     */
    fun clearTakenIfEmpty() {
        assertOwner()
        val b = BOTTOM.get(this) as Long // plain: only the owner writes bottom
        if (clearedBelow < b && TOP.getAcquire(this) as Long >= b) clearTaken(b) // acquire: see clearTaken()
    }

    /**
     * Owner only, with the deque empty (`top == bottom == b`, just read): clears the slots of
     * the tasks taken below [b] since the last call (a thief leaves the slot it took as it was),
     * so an idle worker's ring keeps nothing alive. Safe against thieves, and amortised O(1)
     * per take: `docs/deque.md` ("Slots thieves took are cleared by the owner").
     */
    private fun clearTaken(b: Long) {
        VarHandle.acquireFence() // pairs with the thieves' CASes on top, through the caller's read of top
        val a = array
        var i = maxOf(clearedBelow, b - a.size)
        while (i < b) {
            a[slot(a, i)] = null // plain: only the owner writes slots; no thief can win index i < top
            i++
        }
        clearedBelow = b
    }

    /** Owner only. Every slot below this index has been cleared ([clearTaken]) or was cleared by the owner's take. */
    private var clearedBelow: Long = 0

    /**
     * Any thread. Number of queued tasks; a racy estimate when read by other threads. `top` is
     * read first, both volatile: a reader that sees a task taken also sees every fork made
     * visible before that take (docs/parking.md, "Forks onto a non-empty deque").
     */
    fun size(): Int {
        val t = TOP.getVolatile(this) as Long // after the CAS on top in steal()/pollOldest() that it sees
        val b = BOTTOM.getVolatile(this) as Long // after the read of top; sees the fork's store
        return (b - t).coerceAtLeast(0).toInt()
    }

    /** Any thread. Whether a thief would currently find a task. */
    fun isEmpty(): Boolean = size() == 0

    /** The check of every owner operation: nothing without `-ea` ([OwnerThreadCheck.ENABLED]). */
    @Suppress("NOTHING_TO_INLINE")
    private inline fun assertOwner() {
        if (OwnerThreadCheck.ENABLED) ownerCheck?.check() // a few bytes inline; the check is out of line
    }

    /** Capacity of the ring, for tests of growth. */
    fun capacity(): Int = array.size

    private fun grow(old: Array<Runnable?>, t: Long, b: Long): Array<Runnable?> {
        val a = arrayOfNulls<Runnable>(old.size * 2)
        var i = t
        while (i < b) {
            a[slot(a, i)] = old[slot(old, i)]
            i++
        }
        array = a // volatile store, before the release store of bottom that exposes new slots
        return a
    }

    private companion object {
        const val INITIAL_CAPACITY = 64

        val TOP: VarHandle = fieldHandle(WorkDeque::class.java, "top", Long::class.javaPrimitiveType!!)
        val BOTTOM: VarHandle = fieldHandle(WorkDeque::class.java, "bottom", Long::class.javaPrimitiveType!!)
        val HIDINGS: VarHandle = fieldHandle(WorkDeque::class.java, "hidings", Int::class.javaPrimitiveType!!)

        fun slot(a: Array<Runnable?>, index: Long): Int = (index and (a.size - 1).toLong()).toInt()
    }
}
