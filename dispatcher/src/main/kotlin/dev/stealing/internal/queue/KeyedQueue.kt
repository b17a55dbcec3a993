package dev.stealing.internal.queue

import dev.stealing.internal.jvm.fieldHandle
import java.lang.invoke.VarHandle

/**
 * A core worker's keyed queue for keyed work ([StealingDispatcher.affinity]):
 * multi-producer, single-consumer, FIFO, unbounded, never stolen from.
 *
 * A linked list with a stub node (after Vyukov's MPSC queue): a producer installs its node as
 * the new tail with one CAS (its linearization point, which fixes dispatch order) and then
 * links the previous tail to it with a release store; the owner worker reads `head.next` with
 * acquire and moves `head` forward. Between a producer's CAS and its link the queue is
 * non-empty but the task is not reachable yet: [poll] returns null, while [hasWork] (tail !=
 * head) already says true, so a worker about to park never misses it.
 *
 * Closing ([close]) installs the shared [CLOSED] node as the tail by the same CAS, so it is
 * ordered with every offer: an offer whose CAS came first is linked before [CLOSED] and is
 * still polled; every later offer sees [CLOSED] as the tail and fails. The owner closes its
 * queue when it exits and then drains it up to [CLOSED], so a keyed task is either taken by
 * that drain or refused to its producer, never left behind (the producer's CAS is a CAS, not
 * an exchange as in Vyukov's queue, for exactly this: an exchange cannot refuse).
 *
 * `shutdownNow()` takes the tasks still queued from another thread ([closeAndTakeAll]), while
 * the owner may still be polling: each node's task is claimed by an atomic exchange, by [poll]
 * and by [closeAndTakeAll] alike, so exactly one of them gets it, and [poll] steps over a node
 * already claimed.
 *
 * Owner only: [poll], [hasLinkedTask], [drainClosed]. Any thread: [offer], [close],
 * [closeAndTakeAll], [hasWork], [size].
 */
internal class KeyedQueue {
    private class Node(@JvmField var task: Runnable?) { // task: plain until published, then through TASK
        // Through NEXT; volatile so that a catch can store it with no call (link()).
        @Suppress("unused") @Volatile @JvmField var next: Node? = null
    }

    /** The stub: the last node taken (its task already cleared). Written by the owner only; through HEAD. */
    @Suppress("unused") private var head: Node

    /** The last node offered; through TAIL. */
    @Suppress("unused") private var tail: Node

    init {
        val stub = Node(null)
        head = stub
        tail = stub // both published by the final-field-free safe publication of the owning Worker
    }

    /**
     * Appends [task]; false, and nothing queued, once the queue is [close]d. The successful CAS
     * on `tail` is a full barrier (a volatile read-modify-write).
     */
    fun offer(task: Runnable): Boolean {
        val node = Node(task)
        while (true) {
            val previous = TAIL.getVolatile(this) as Node // pairs with the CAS in offer()/close()
            if (previous === CLOSED) return false
            if (TAIL.compareAndSet(this, previous, node)) {
                link(previous, node)
                return true
            }
        }
    }

    /**
     * Any thread. Refuses every later [offer]; tasks offered before stay queued for [poll].
     * Idempotent.
     */
    fun close() {
        while (true) {
            val previous = TAIL.getVolatile(this) as Node
            if (previous === CLOSED) return
            if (TAIL.compareAndSet(this, previous, CLOSED)) { // ordered with every offer's CAS
                link(previous, CLOSED)
                return
            }
        }
    }

    /**
     * After the CAS that made [node] the tail: links it behind [previous] (release: pairs with
     * the getAcquire in [poll] and [closeAndTakeAll]). An Error in the release store's call (a
     * deep producer's `StackOverflowError`) must not leave the node unlinked: everything offered
     * after it would be unreachable, the owner would never poll past it, and a close would wait
     * on it for ever. So the catch links it with a volatile store, which is no call.
     */
    @Suppress("NOTHING_TO_INLINE")
    private inline fun link(previous: Node, node: Node) {
        try {
            NEXT.setRelease(previous, node)
        } catch (e: Throwable) {
            previous.next = node // volatile: pairs with the getAcquire in poll() and closeAndTakeAll(), as the release store
            throw e
        }
    }

    /**
     * Owner only: the oldest task, or null if none is reachable yet (or only [CLOSED] follows).
     * Steps over nodes whose task [closeAndTakeAll] took.
     */
    fun poll(): Runnable? {
        while (true) {
            val h = HEAD.getOpaque(this) as Node // only the owner writes head
            val next = NEXT.getAcquire(h) as Node? ?: return null // pairs with setRelease in offer()/close()
            if (next === CLOSED) return null // never becomes the stub: it is shared by all queues
            // Claimed against closeAndTakeAll() (an exchange, not a plain read and write: the two
            // may reach this node at once); the null also lets the task be collected.
            val task = TASK.getAndSet(next, null) as Runnable?
            HEAD.setRelease(this, next) // `next` becomes the stub; pairs with getAcquire in hasWork() from other threads
            if (task != null) return task
        }
    }

    /**
     * Owner only: whether [poll] would return a task now. After [closeAndTakeAll] it may say
     * true for a node whose task was taken (the pool is stopping then, and the owner exits).
     */
    fun hasLinkedTask(): Boolean {
        // As in poll(): head is written only by the owner; the acquire pairs with setRelease in offer()/close().
        val next = NEXT.getAcquire(HEAD.getOpaque(this) as Node) as Node?
        return next != null && next !== CLOSED
    }

    /**
     * Whether a task is queued or being offered (volatile read of tail). After [close]: until
     * the owner has polled everything linked before [CLOSED] (true while the closer is still
     * linking it, which [drainClosed] relies on).
     */
    fun hasWork(): Boolean {
        val t = TAIL.getVolatile(this)
        val h = HEAD.getAcquire(this) as Node
        return t !== h && !(t === CLOSED && NEXT.getAcquire(h) === CLOSED)
    }

    /**
     * Owner only: closes the queue and hands every task offered before the close to [action],
     * oldest first, including offers still linking their node.
     */
    fun drainClosed(action: (Runnable) -> Unit) {
        close()
        while (true) action(poll() ?: if (hasWork()) continue else return)
    }

    /**
     * Any thread (`shutdownNow()`, while the owner may still be running): closes the queue and
     * hands every task offered before the close that the owner has not polled to [action],
     * oldest first, waiting for offers still linking their node. A task the owner polls
     * meanwhile goes to exactly one of the two ([poll]'s claim).
     */
    fun closeAndTakeAll(action: (Runnable) -> Unit) {
        close()
        var node = HEAD.getAcquire(this) as Node // pairs with setRelease in poll(): its task is claimed
        while (true) {
            // Null while a producer that got in before the close is between its CAS and its link: brief.
            val next = NEXT.getAcquire(node) as Node? // pairs with setRelease in offer()/close()
            if (next == null) {
                Thread.onSpinWait()
                continue
            }
            if (next === CLOSED) return
            (TASK.getAndSet(next, null) as Runnable?)?.let(action)
            node = next
        }
    }

    /** Tasks queued (racy walk, for statistics). */
    fun size(): Int {
        var n = 0
        var node = (HEAD.getAcquire(this) as Node).let { NEXT.getAcquire(it) as Node? }
        while (node != null && node !== CLOSED && n < Int.MAX_VALUE) {
            if (node.task != null) n++ // not taken by closeAndTakeAll()
            node = NEXT.getAcquire(node) as Node?
        }
        return n
    }

    private companion object {
        /** The tail of every closed queue; its `next` stays null. */
        val CLOSED = Node(null)

        val HEAD: VarHandle = fieldHandle(KeyedQueue::class.java, "head", Node::class.java)
        val TAIL: VarHandle = fieldHandle(KeyedQueue::class.java, "tail", Node::class.java)
        val NEXT: VarHandle = fieldHandle(Node::class.java, "next", Node::class.java)
        val TASK: VarHandle = fieldHandle(Node::class.java, "task", Runnable::class.java)
    }
}
