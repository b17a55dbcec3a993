package dev.stealing

import java.lang.invoke.VarHandle

/**
 * A core worker's *personal* queue for keyed work ([StealingDispatcher.affinity]):
 * multi-producer, single-consumer, FIFO, unbounded, never stolen from.
 *
 * A linked list with a stub node (Vyukov's MPSC queue): a producer swaps itself in as the new
 * tail with one atomic exchange (its linearization point, which fixes dispatch order) and then
 * links the previous tail to it with a release store; the owner worker reads `head.next` with
 * acquire and moves `head` forward. Between a producer's exchange and its link the queue is
 * non-empty but the task is not reachable yet: [poll] returns null, while [hasWork] (tail !=
 * head) already says true, so a worker about to park never misses it.
 *
 * Owner only: [poll]. Any thread: [offer], [hasWork], [size].
 */
internal class AffinityQueue {
    private class Node(@JvmField var task: Runnable?) {
        @Suppress("unused") @JvmField var next: Node? = null // through NEXT
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

    /** Appends [task]. The exchange on `tail` is a full barrier (a volatile read-modify-write). */
    fun offer(task: Runnable) {
        val node = Node(task)
        val previous = TAIL.getAndSet(this, node) as Node
        NEXT.setRelease(previous, node) // pairs with the getAcquire in poll()
    }

    /** Owner only: the oldest task, or null if none is reachable yet. */
    fun poll(): Runnable? {
        val h = HEAD.getOpaque(this) as Node // only the owner writes head
        val next = NEXT.getAcquire(h) as Node? ?: return null // pairs with setRelease in offer()
        val task = next.task
        next.task = null // let it be collected; `next` becomes the stub
        HEAD.setRelease(this, next) // pairs with getAcquire in hasWork() from other threads
        return task
    }

    /** Whether a task is queued or being offered (volatile read of tail). */
    fun hasWork(): Boolean = TAIL.getVolatile(this) !== HEAD.getAcquire(this)

    /** Tasks queued (racy walk, for statistics). */
    fun size(): Int {
        var n = 0
        var node = (HEAD.getAcquire(this) as Node).let { NEXT.getAcquire(it) as Node? }
        while (node != null && n < Int.MAX_VALUE) {
            n++
            node = NEXT.getAcquire(node) as Node?
        }
        return n
    }

    private companion object {
        val HEAD: VarHandle = fieldHandle(AffinityQueue::class.java, "head", Node::class.java)
        val TAIL: VarHandle = fieldHandle(AffinityQueue::class.java, "tail", Node::class.java)
        val NEXT: VarHandle = fieldHandle(Node::class.java, "next", Node::class.java)
    }
}
