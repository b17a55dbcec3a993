package dev.stealing.internal.worker

import dev.stealing.internal.jvm.StealEvent
import dev.stealing.internal.jvm.jfrStarted
import dev.stealing.internal.queue.StealResult
import dev.stealing.internal.queue.WorkDeque

/**
 * A worker's stealing: steal rounds over the other workers ([scanOthers]), take-half balancing
 * ([stealHalf]) and the single steal both are made of ([stealFrom]). Owned by its [worker]'s
 * thread; every field is owner only.
 *
 * Victims are visited from a random start with an odd stride over the power-of-two worker
 * table, so a round visits every worker once. A victim's lone task is left to its owner while
 * the owner keeps starting tasks ([ranTasksSinceLastLook]): it is usually about to pop it.
 */
internal class Thief(private val worker: Worker) {
    private val pool = worker.pool

    private var random = (worker.index + 1) * 0x9E3779B9.toInt() or 1

    /** Each table slot's `topLevelTasks` at this worker's last look ([ranTasksSinceLastLook]). */
    private var seenTopLevelTasks = LongArray(0)

    /**
     * One probe of a random other worker, queue to queue: with [yielded], from its yield queue
     * into this worker's (the balance of the yield queues); otherwise from its deque onto this
     * worker's deque (a worker that has run dry: a burst spreads in one go, not one steal per
     * task). If the other queue is longer than this one, steal half the difference (at most
     * [MAX_BALANCE_STEAL]); if it holds any task but its worker has not started a task since
     * this worker's last look (stuck in one task), steal one, so a victim's lone task is taken
     * only from a stuck victim, as in [scanOthers]. Returns the first task taken and pushes the
     * rest. The two kinds never mix: a yielded coroutine put on a deque could be resumed nested
     * in a join that helps from that deque, and a fork put in a yield queue would be out of its
     * joiner's reach. Stops at the first steal that finds nothing, and takes nothing once the
     * pool is stopping. Costs one read of the other queue's size and of its worker's task count
     * when nothing is taken. An extra worker takes no half of a deque: a deque full of stolen
     * tasks would keep it from going idle when it is surplus (its own yield queue it hands over
     * instead).
     */
    fun stealHalf(yielded: Boolean): Runnable? {
        val me = worker
        if (pool.isStopping() || (me.isExtra && !yielded)) return null
        val table = pool.workers.slots
        val slot = nextRandom() and (table.length() - 1)
        val victim = table.getAcquire(slot) // pairs with the setRelease in setLocked()
        if (victim == null || victim === me) return null
        val from = if (yielded) victim.yields else victim.deque
        val into = if (yielded) me.yields else me.deque
        val queued = from.size()
        if (queued == 0) return null
        val stuck = !ranTasksSinceLastLook(victim, slot)
        val take = minOf(maxOf((queued - into.size()) / 2, if (stuck) 1 else 0), MAX_BALANCE_STEAL)
        var first: Runnable? = null
        var queuedHere = false
        for (k in 0 until take) {
            val task = stealFrom(victim, from).taskOrNull ?: break
            if (first == null) {
                first = task
            } else {
                into.push(task)
                queuedHere = true
                me.counters.countStealRequeued() // counted again by the take that runs it (each run is counted by one take)
            }
        }
        if (queuedHere) pool.signalAfterPublish() // the pushes above, as any push
        return first
    }

    /**
     * One steal round over every other worker, plus the global queue. Returns null only when
     * every victim answered Empty or held a single task that this round leaves to its owner; a
     * Retry (a lost race, or a victim's removal hiding tasks) repeats the round. A victim's
     * lone task is left to it when [skipLoneTasks] (the first round), and in later rounds
     * while the victim is making progress ([ranTasksSinceLastLook]): a worker that keeps
     * starting new tasks will pop it soon, the usual case of a coroutine hand-off (the partner
     * resumed, then the running coroutine suspends), and stealing it would split the pair
     * across two cores. A victim stuck in one task loses its lone task at the next round.
     */
    fun scanOthers(skipLoneTasks: Boolean = false): Runnable? {
        val me = worker
        val table = pool.workers.slots
        val mask = table.length() - 1
        while (true) {
            var retry = false
            val r = nextRandom()
            val start = r and mask
            val stride = (r ushr 16) or 1 // odd: visits every slot of the power-of-two table
            var k = 0
            var i = start
            while (k <= mask) {
                val victim = table.getAcquire(i) // pairs with the setRelease in setLocked()
                if (victim != null && victim !== me &&
                    !(victim.queuedTasks() == 1 && (ranTasksSinceLastLook(victim, i) || skipLoneTasks))
                ) {
                    val result = stealFrom(victim)
                    val task = result.taskOrNull
                    if (task != null) return task
                    if (result.isRetry) retry = true
                }
                i = (i + stride) and mask
                k++
            }
            me.finder.pollGlobal()?.let { return it }
            pool.fair.poll()?.let { return it }
            if (!retry) return null
        }
    }

    /**
     * Whether [victim] (in table slot [slot]) has started a top-level task since this worker's
     * previous call for that slot; records what it saw. A racy plain read of the victim's
     * counter: a stale value reads as "no progress", which only makes the caller steal, as it
     * would without this check.
     */
    private fun ranTasksSinceLastLook(victim: Worker, slot: Int): Boolean {
        var seen = seenTopLevelTasks
        if (slot >= seen.size) {
            seen = seen.copyOf(pool.workers.slots.length())
            seenTopLevelTasks = seen
        }
        val now = victim.topLevelTasks // plain, racy: pairs with nothing (the owner's plain ++ in run())
        val before = seen[slot]
        seen[slot] = now
        return now != before
    }

    /**
     * Steals the oldest task of [victim]'s deque or, if that is empty and [withYields], of its
     * yield queue, counting it; a stolen forked task (`JoinableTask`) records this worker as its thief so that
     * a joiner can help by stealing back from here (from the deque only: a joiner must not
     * resume somebody's yielded coroutine nested in its join). Retry (a lost race on the
     * deque, or a removal hiding tasks) only when the yield queue had nothing to take either.
     */
    fun stealFrom(victim: Worker, withYields: Boolean = true): StealResult {
        val result = stealFrom(victim, victim.deque)
        if (withYields && result.taskOrNull == null) {
            val yielded = stealFrom(victim, victim.yields)
            if (!yielded.isEmpty) return yielded
        }
        return result
    }

    /** [stealFrom] of one of [victim]'s two queues, [queue], with the same bookkeeping. */
    private fun stealFrom(victim: Worker, queue: WorkDeque): StealResult {
        val me = worker
        me.counters.countStealAttempt()
        val result = queue.steal()
        val task = result.taskOrNull
        if (task != null) {
            me.counters.countSteal()
            pool.onStolen(task, me) // a forked task records its thief, whom its joiner helps
            if (jfrStarted()) recordSteal(victim)
        }
        return result
    }

    /** The JFR event of a successful steal from [victim] (JFR has started). */
    private fun recordSteal(victim: Worker) {
        val event = StealEvent()
        if (event.isEnabled) {
            event.pool = pool.name
            event.thief = worker.index
            event.victim = victim.index
            event.victimQueueLeft = victim.queuedTasks()
            event.commit()
        }
    }

    private fun nextRandom(): Int {
        var x = random // xorshift32
        x = x xor (x shl 13)
        x = x xor (x ushr 17)
        x = x xor (x shl 5)
        random = x
        return x
    }

    private companion object {
        /** Most tasks [stealHalf] takes from one other worker at once. */
        const val MAX_BALANCE_STEAL = 256
    }
}
