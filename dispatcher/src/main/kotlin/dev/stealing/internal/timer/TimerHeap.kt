package dev.stealing.internal.timer

import dev.stealing.internal.jvm.fieldHandle
import java.lang.invoke.VarHandle
import java.util.concurrent.locks.ReentrantLock

/**
 * One core worker's pending timers ([Timer]): a binary min-heap by deadline (ties by insertion
 * order), in an array, under a lock, fed by a lock-free inbox for timers from other threads.
 *
 * Who uses it: the owner [add]s the timers it creates and takes the due ones between tasks.
 * Another thread [offer]s: one CAS onto [inbox], moved into the heap by whoever takes the lock
 * next ([takeOffers]), so an offerer never waits for the lock. Any thread may [remove] a
 * cancelled timer, in the heap or still in the inbox; other workers take due timers with
 * [tryPollDue], which never waits for the lock, when the owner is busy or blocked.
 *
 * A lock for the heap (every operation is O(log n) on a few cache lines, and usually
 * uncontended) and a cancelled timer removed at once, so the heap holds only live timers:
 * `docs/timers.md` ("Cancellation and memory"). The heap's arrays are a [DeadlineHeap].
 *
 * No timer is lost to an Error, an `OutOfMemoryError` while the arrays grow above all: the room
 * for the offers is made before they leave the inbox ([takeOffersLocked]), an add makes its
 * room before it changes anything, and [closeAndDrain] collects the timers it passes on without
 * allocating, and passes on all of them even when its action fails for one.
 *
 * [earliest] is the heap's head (offered timers not yet taken in are not in it), published with
 * a volatile write after every change, so a parking owner can compute its park timeout, and
 * searchers and the starvation monitor can see a due timer, without the lock.
 * [closeAndDrain] (the owner's exit, or `shutdownNow`) refuses later adds and offers, so a timer
 * is either drained by the closer or refused to its creator, never stranded.
 */
internal class TimerHeap {
    private val lock = ReentrantLock()
    private val heap = DeadlineHeap() // guarded by lock
    private var closed = false // guarded by lock

    /**
     * Timers offered by other threads and not yet taken into the heap, newest first, linked by
     * [Timer.nextInInbox]; [CLOSED_INBOX] once closed. Pushed with a CAS by [offer]; emptied
     * only under the lock (by [takeOffersLocked] and [closeAndDrain]), so a swap never reopens
     * a closed inbox and a [remove] under the lock sees a stable inbox.
     */
    @Volatile private var inbox: Timer? = null

    /** The timer with the earliest deadline, or null; written under the lock after each change. */
    @Volatile var earliest: Timer? = null
        private set

    /** The owner's park deadline: written by [publishParkDeadline], read by [offer] (see there). */
    @Volatile var ownerParkDeadline: Long = 0L
        private set

    /** Tests only: [DeadlineHeap.beforeAllocation] of this heap's arrays. */
    internal var beforeAllocation: Runnable?
        get() = heap.beforeAllocation
        set(value) {
            heap.beforeAllocation = value
        }

    /** The length of the heap's array (tests: memory given back after a burst). */
    fun capacity(): Int = locked { heap.capacity() }

    /** Pending timers, heap and inbox (for stats: under the lock, exact at one moment). */
    fun pendingCount(): Int = locked {
        var n = heap.size
        var t = inbox
        if (t === CLOSED_INBOX) t = null
        while (t != null) {
            if (t.heapIndex != CANCELLED_IN_INBOX) n++
            t = t.nextInInbox
        }
        n
    }

    /** Whether any timer is pending, in the heap or offered (no lock). */
    fun hasPending(): Boolean = earliest != null || hasOffers()

    /** Whether timers offered by other threads wait to be taken into the heap (no lock). */
    fun hasOffers(): Boolean {
        val head = inbox
        return head != null && head !== CLOSED_INBOX
    }

    /** Whether the earliest timer's deadline is at or before [now] (no lock; offered timers not counted). */
    fun isDue(now: Long): Boolean {
        val e = earliest ?: return false
        return e.deadline - now <= 0
    }

    /**
     * The owner adds [timer]: [ADDED], or [ADDED_EARLIEST] if it is now the earliest, or
     * [CLOSED] if this heap no longer takes timers. Other threads use [offer].
     */
    fun add(timer: Timer): Int = locked {
        if (closed) return@locked CLOSED
        heap.ensureRoom(1) // first: an Error there leaves the timer unadded, and its creator told
        timer.heap = this
        heap.insert(timer)
        publishLocked()
        if (heap.head() === timer) ADDED_EARLIEST else ADDED
    }

    /**
     * Another thread adds [timer]: pushed onto the inbox with a CAS, without the lock. Returns
     * [CLOSED] if this heap is closed, [OFFERED_EARLIER] if the timer is due before the deadline
     * the owner last published for its park (an idle owner must be unparked), else [OFFERED]
     * (the owner takes it in at its next look, or before it parks).
     *
     * No missed deadline: Dekker pair with [publishParkDeadline], both sides volatile. This
     * pushes (the CAS), then reads [ownerParkDeadline]; the owner writes it, then reads the
     * inbox. Either the owner's read finds this timer, or this read sees the deadline the owner
     * will park until. A stale deadline (from an earlier park) means the owner's write came
     * after this read, so its read of the inbox came after the push.
     */
    fun offer(timer: Timer): Int {
        timer.heapIndex = IN_INBOX
        // Volatile: a canceller that reads it then finds the timer in the inbox under the lock;
        // and the periodic re-add's Dekker pair with cancel() (DelayedTask.run) needs it.
        timer.heap = this
        while (true) {
            val head = inbox
            if (head === CLOSED_INBOX) {
                // A canceller that saw `heap` may have marked it and counted the cancel: it
                // was cancelled, so that count stands.
                timer.heap = null
                timer.heapIndex = -1
                return CLOSED
            }
            timer.nextInInbox = head
            if (INBOX.compareAndSet(this, head, timer)) {
                return if (timer.deadline - ownerParkDeadline < 0) OFFERED_EARLIER else OFFERED
            }
        }
    }

    /**
     * The owner, about to park (after its IDLE write): takes the offers in, publishes the
     * deadline of its earliest timer as the one it parks until, and returns that timer (null:
     * it parks without a time limit). The other side of [offer]'s Dekker pair: it writes
     * [ownerParkDeadline], then reads the inbox, and starts again if an offer came meanwhile.
     */
    fun publishParkDeadline(): Timer? {
        while (true) {
            takeOffers()
            val e = earliest
            // No timer: a deadline later than any offer's but one of a maximal delay (146 years).
            ownerParkDeadline = e?.deadline ?: (System.nanoTime() + MAX_DELAY_NANOS)
            if (!hasOffers()) return e
        }
    }

    /**
     * Moves the offered timers into the heap (a volatile read when there are none); true if the
     * earliest timer is now an earlier one.
     */
    fun takeOffers(): Boolean = hasOffers() && locked { takeOffersLocked() }

    /** [takeOffers] for a thread that must not wait: false at once if the lock is held. */
    fun tryTakeOffers(): Boolean {
        if (!hasOffers() || !lock.tryLock()) return false
        try {
            return takeOffersLocked()
        } finally {
            lock.unlock()
        }
    }

    /**
     * Removes [timer] if it is still pending here (in the heap, or offered and not yet taken
     * in: then it is marked and dropped when the inbox is taken); false if it was taken or never
     * here.
     */
    fun remove(timer: Timer): Boolean = locked {
        val i = timer.heapIndex
        when {
            timer.heap !== this -> false
            i == IN_INBOX -> {
                timer.heapIndex = CANCELLED_IN_INBOX
                true
            }
            !heap.holdsAt(i, timer) -> false
            else -> {
                heap.removeAt(i)
                publishLocked()
                true
            }
        }
    }

    /**
     * Owner: takes the offered timers in, then up to [max] timers due at [now] into [into]
     * (earliest first); returns how many.
     */
    fun pollDue(now: Long, into: Array<Timer?>, max: Int): Int = locked {
        takeOffersLocked()
        takeDueLocked(now, into, max)
    }

    /** [pollDue] of the heap alone, for another worker: 0 at once if the lock is held. */
    fun tryPollDue(now: Long, into: Array<Timer?>, max: Int): Int {
        if (!lock.tryLock()) return 0
        try {
            return takeDueLocked(now, into, max)
        } finally {
            lock.unlock()
        }
    }

    /**
     * Closes this heap (later adds and offers are refused) and passes every pending timer,
     * offered ones too, to [action], after the lock is released. Under the lock it allocates
     * nothing: the timers are linked into one list through [Timer.nextInInbox] (free once a
     * timer is out of the inbox, and no longer read by anyone else once the heap is closed), so
     * an `OutOfMemoryError` cannot strand the ones not yet collected. An Error or exception from
     * [action] for one timer does not keep the others from it: the first is thrown once all were
     * passed, the others added to it as suppressed.
     */
    fun closeAndDrain(action: (Timer) -> Unit) {
        var first: Timer? = null
        locked {
            closed = true
            var offered = INBOX.getAndSet(this, CLOSED_INBOX) as Timer?
            if (offered === CLOSED_INBOX) offered = null // closed before
            var last: Timer? = null
            forEachOffered(offered) { t ->
                val cancelled = t.heapIndex == CANCELLED_IN_INBOX
                t.heap = null
                t.heapIndex = -1
                if (!cancelled) {
                    if (last == null) first = t else last!!.nextInInbox = t
                    last = t
                }
            }
            heap.drain { t ->
                if (last == null) first = t else last!!.nextInInbox = t
                last = t
            }
            publishLocked()
        }
        var failure: Throwable? = null
        forEachOffered(first) { t ->
            try {
                action(t)
            } catch (e: Throwable) {
                if (failure == null) failure = e else failure!!.addSuppressed(e)
            }
        }
        failure?.let { throw it }
    }

    private inline fun <R> locked(block: () -> R): R {
        lock.lock()
        try {
            return block()
        } finally {
            lock.unlock()
        }
    }

    /**
     * Under the lock: moves the inbox into the heap, oldest offer first (so equal deadlines keep
     * their offer order), dropping the ones removed meanwhile; true if [earliest] changed (only
     * to an earlier timer: nothing leaves the heap here).
     *
     * It takes exactly the offers it counted, and makes room for them first: an Error while the
     * heap grows (an `OutOfMemoryError`) leaves every offer in the inbox, for the next take or
     * the closing drain, where taking them first would have dropped all those not yet inserted.
     * Offers pushed after the count stay in the inbox: they are above the counted ones (an
     * offer only pushes onto the head), so the link to the counted ones is cut from the newest
     * of them, a field only lock holders read once its push is done.
     */
    private fun takeOffersLocked(): Boolean {
        val head = inbox
        if (head == null || head === CLOSED_INBOX) return false
        // Not CLOSED_INBOX, and still holding `head` and all below it: only closeAndDrain()
        // closes the inbox and only this method empties it, both under this lock.
        var offers = 0
        var t: Timer? = head
        while (t != null) {
            offers++
            t = t.nextInInbox
        }
        heap.ensureRoom(offers)
        if (!INBOX.compareAndSet(this, head, null)) {
            var newer = inbox!!
            while (newer.nextInInbox !== head) newer = newer.nextInInbox!!
            newer.nextInInbox = null
        }
        var newestFirst: Timer? = head
        var oldestFirst: Timer? = null
        while (newestFirst != null) { // reverse the stack
            val next = newestFirst.nextInInbox
            newestFirst.nextInInbox = oldestFirst
            oldestFirst = newestFirst
            newestFirst = next
        }
        val before = earliest
        forEachOffered(oldestFirst) { o ->
            if (o.heapIndex == CANCELLED_IN_INBOX) {
                o.heap = null
                o.heapIndex = -1
            } else {
                heap.insert(o) // room made above: allocates nothing
            }
        }
        publishLocked()
        return earliest !== before
    }

    /** Calls [action] on each timer of the list from [first], unlinking it first. */
    private inline fun forEachOffered(first: Timer?, action: (Timer) -> Unit) {
        var t = first
        while (t != null) {
            val next = t.nextInInbox
            t.nextInInbox = null
            action(t)
            t = next
        }
    }

    /** Under the lock: republishes [earliest] after a change. */
    private fun publishLocked() {
        earliest = heap.head()
    }

    /** Under the lock: takes up to [max] timers due at [now] into [into], earliest first. */
    private fun takeDueLocked(now: Long, into: Array<Timer?>, max: Int): Int {
        val n = heap.takeDue(now, into, max)
        if (n > 0) publishLocked()
        return n
    }

    companion object {
        const val CLOSED = 0
        const val ADDED = 1
        const val ADDED_EARLIEST = 2
        const val OFFERED = 3
        const val OFFERED_EARLIER = 4
        const val INITIAL_CAPACITY = DeadlineHeap.INITIAL_CAPACITY

        /** [Timer.heapIndex] of a timer offered and not yet taken into the heap. */
        const val IN_INBOX = -2

        /** [Timer.heapIndex] of an offered timer removed before it was taken in. */
        const val CANCELLED_IN_INBOX = -3

        /** The inbox of a closed heap: offers are refused. */
        private val CLOSED_INBOX: Timer = object : Timer(0L) {
            override fun run() {}
            override fun abandon(why: String) {}
        }

        private val INBOX: VarHandle = fieldHandle(TimerHeap::class.java, "inbox", Timer::class.java)
    }
}
