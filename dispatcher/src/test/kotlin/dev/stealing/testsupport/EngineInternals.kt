package dev.stealing.testsupport

import dev.stealing.internal.queue.FairRotation
import dev.stealing.internal.queue.MpmcTaskQueue
import dev.stealing.internal.queue.WorkDeque

// What tests read of the engine's private state and no engine code needs: read by reflection
// here, so that main holds no member for tests only.

private fun Any.privateField(owner: Class<*>, name: String): Any? =
    owner.getDeclaredField(name).apply { isAccessible = true }.get(this)

/** The ring slots of this deque that still hold a reference, queued or not (memory kept after takes). */
internal fun WorkDeque.heldReferences(): Int = (privateField(WorkDeque::class.java, "array") as Array<*>).count { it != null }

/** The capacity of this queue's newest segment (its growth). */
internal fun MpmcTaskQueue.tailCapacity(): Int {
    val tail = privateField(MpmcTaskQueue::class.java, "tail")!!
    return tail.privateField(tail.javaClass, "capacity") as Int
}

/** Tokens in the fair queues' active list, including appends still being written: one per queue with work. */
internal fun FairRotation.activeCount(): Int = (privateField(FairRotation::class.java, "active") as MpmcTaskQueue).size()
