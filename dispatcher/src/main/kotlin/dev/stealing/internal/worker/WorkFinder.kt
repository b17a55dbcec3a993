package dev.stealing.internal.worker

import dev.stealing.internal.queue.KeyedQueue

/**
 * Where a worker looks for its next task, in order, and when it gives up and parks. Owned by
 * its [worker]'s thread; every field is owner only.
 *
 * 1. every `globalCheckInterval`-th task: its due timers, the global queue, then a fair
 *    queue's turn, then the oldest task of its own deque, then the oldest yielded coroutine
 *    (every other time that one first), so neither timers, nor outside work, nor old local
 *    work starves under a LIFO stream of new local work, nor a yielded coroutine under any
 *    stream ([pollPeriodic]);
 * 2. its own deque, newest first (LIFO: the child just forked runs next, on a warm cache);
 * 3. its due timers ([WorkerTimers]; taken out of the heap and pushed onto the deque, so they
 *    can be stolen like any task), the global queue, then the fair queues (the next queue with
 *    work in the round-robin, which yields up to its weight in tasks), its keyed work (below),
 *    then the oldest coroutine in its yield queue (`yield()` on this worker);
 * Keyed work (`StealingDispatcher.affinity`) waits in a core worker's keyed queue, which only
 * that worker serves: before everything above for [KEYED_SWAP] tasks, after its own deque and
 * the global and fair queues (but before stealing) for the next [KEYED_SWAP], and so on, so
 * neither keyed nor shared work starves the other.
 *
 * 4. it takes due timers from other workers' heaps (a worker stuck in a long task or blocked
 *    must not hold them back), then (a core worker) probes one random other worker and takes
 *    half of its deque at once ([Thief.stealHalf]);
 * 5. it becomes a *searcher* and steals from the other workers ([Thief.scanOthers]): one round
 *    that leaves a victim's lone task to its owner, then more that leave it only while the
 *    victim keeps starting tasks, for `spinRounds` steps of 64 spin-waits and a
 *    `Thread.yield()`, the rounds further apart as the search goes on (after 1, 2, 4, then
 *    every 8 steps), a look at the global queue after every step and (once it has run
 *    keyed work) at its keyed queue between spin-waits, or until a yield kept it off the core
 *    for over 100 us;
 * 6. it parks ([WorkerParking]: push idle, fence, re-scan, park); a core worker with pending
 *    timers parks no longer than until its earliest deadline.
 *
 * After each task the worker first asks [nextLocal], the short path of this order: its own
 * deque's newest task when nothing before step 2 is due.
 */
internal class WorkFinder(private val worker: Worker) {
    private val pool = worker.pool

    /** Whether the keyed queue is served before shared work (swapped every [KEYED_SWAP] tasks). */
    private var keyedFirst = false
    private var keyedTick = 0
    private var tick = 0
    private var yieldTick = 0 // pollYielded() calls since its last stealHalf()
    private var yieldedFirst = false // whether this pollPeriodic() takes a yielded coroutine first

    /** Buffer for [pollGlobal]'s batches. */
    private val batch = arrayOfNulls<Runnable>(GLOBAL_BATCH)

    /** The next task to run, or null when the worker should exit (shutdown). */
    fun findTask(): Runnable? {
        val w = worker
        val thief = w.thief
        val timers = w.timerDuty
        while (true) {
            if (pool.isStopping()) return null
            if (w.isExtra) { // a core worker pays this one test
                if (!w.yields.isEmpty() && !pool.isShutdown() && pool.idle.hasSurplus()) {
                    handOverYields()?.let {
                        w.counters.countLocalPop()
                        return it
                    }
                }
                // Only with empty queues: nobody re-scans for a surplus worker, and a retired
                // one's slot may be reused, so what it left queued would be stranded.
                if (!w.hasQueuedTasks()) {
                    when (w.parking.parkSurplus()) {
                        true -> continue
                        false -> return null
                        null -> {} // no surplus: search as a core worker would
                    }
                }
            }
            val keyed = w.keyedQueue
            if (keyed != null) {
                if (++keyedTick == KEYED_SWAP) {
                    keyedTick = 0
                    keyedFirst = !keyedFirst
                }
                if (keyedFirst) pollKeyed(keyed)?.let { return it }
            }
            if (++tick == pool.globalCheckInterval) {
                tick = 0
                pollPeriodic()?.let { return it }
            }
            w.deque.pop()?.let {
                w.counters.countLocalPop()
                return it
            }
            timers.pollDueTimers()?.let { return it }
            pollGlobal()?.let { return it }
            pool.fair.poll()?.let { return it }
            if (keyed != null) pollKeyed(keyed)?.let { return it }
            pollYielded()?.let { return it }
            timers.takeOthersDueTimers()?.let { return it }
            thief.stealHalf(yielded = false)?.let { return it }
            val spinRounds = pool.config.spinRounds
            // First round: leave a victim's lone task to its owner for a moment (it is usually
            // about to pop it: a coroutine hand-off or a fork it will join), so a wake-up does
            // not turn a local hand-off into a cross-thread one. Later rounds take it only from a
            // victim stuck in one task (scanOthers).
            // A worker that was busy makes this round before counting itself as a searcher:
            // if it finds work at once it never touches ctl, which every push reads. (The
            // count only spares producers a wake-up; parking does not depend on it.)
            thief.scanOthers(skipLoneTasks = spinRounds > 0)?.let { return it }
            pool.idle.beginSearch(w.idleNode)
            // The search is spinRounds steps of SPIN_WAITS_PER_STEP spin-waits, each step ended
            // by a Thread.yield(), as rayon-core's idle rounds yield: with as many runnable
            // threads as cores, a searcher that only spins holds a core that a woken thread
            // needs (the caller of runBlocking taking the pool's result, or a worker another
            // just woke) until the OS preempts it or the search ends. On a 2-vCPU Xeon VM that made
            // 10-25% of the runs of a short coroutine job take 50-75 us, the length of a search,
            // instead of 8-15 (docs/investigations/2026-11-28-a-searcher-that-yields.md).
            // A steal round, whose probes read lines that busy victims write at every push, pop
            // and task, comes after the first step, then after 2, 4, then every
            // MAX_STEPS_BETWEEN_ROUNDS steps: probing after every step slowed a coroutine
            // hand-off on another worker (docs/investigations/2026-11-27-searcher-probes.md).
            var stepsLeft = spinRounds
            var stepsBetweenRounds = 1
            var stepsToRound = 1
            // Only a worker that has run keyed work (its own count, which only grows) looks at its
            // keyed queue between spin-waits: a pool used without `affinity` searches as before.
            val watchedKeyed = if (w.counters.keyedPops > 0) keyed else null
            while (stepsLeft > 0) {
                if (spinUntilKeyed(watchedKeyed)) pollKeyed(watchedKeyed!!)?.let { return it }
                val beforeYield = System.nanoTime()
                Thread.yield()
                // Other threads want this core: stop searching and park, so that a push wakes a
                // worker instead of waiting for this one to get the core back.
                if (System.nanoTime() - beforeYield > CONTENDED_YIELD_NANOS) break
                stepsLeft--
                // While a worker searches, a submission from outside wakes nobody: look at the
                // global queue after every step (two volatile reads while it is empty), not only
                // at the steal rounds, which come up to MAX_STEPS_BETWEEN_ROUNDS steps apart.
                if (pool.global.size() > 0) pollGlobal()?.let { return it }
                if (--stepsToRound > 0 && stepsLeft > 0) continue
                thief.scanOthers()?.let { return it }
                if (keyed != null) pollKeyed(keyed)?.let { return it }
                timers.pollDueTimers()?.let { return it } // a stream of timers from outside comes due while it searches
                timers.takeOthersDueTimers()?.let { return it }
                stepsBetweenRounds = minOf(stepsBetweenRounds * 2, MAX_STEPS_BETWEEN_ROUNDS)
                stepsToRound = stepsBetweenRounds
            }
            if (!w.parking.parkIdle()) return null
        }
    }

    /**
     * After a task: the newest task of the own deque when [findTask] would take it next and do
     * nothing else first, else null (then the worker calls [findTask]). That is: a core worker
     * (an extra one checks for surplus first), no swap of keyed and shared work due, no keyed
     * task waiting in a keyed-first stretch, no periodic look due, the pool not stopping. It
     * counts the task as [findTask] would; on null it has counted nothing, so [findTask]
     * counts as it always does.
     */
    fun nextLocal(): Runnable? {
        val w = worker
        val keyed = w.keyedQueue ?: return null // an extra worker: its surplus checks come first
        val kt = keyedTick + 1
        val t = tick + 1
        if (kt == KEYED_SWAP || t == pool.globalCheckInterval) return null
        if (keyedFirst && keyed.hasLinkedTask()) return null
        if (pool.isStopping()) return null
        val task = w.deque.pop() ?: return null
        keyedTick = kt
        tick = t
        w.counters.countLocalPop()
        return task
    }

    /**
     * The periodic look (every `globalCheckInterval`-th task). Due timers, then the global
     * queue, a fair queue's turn, the oldest task of the deque and the oldest yielded
     * coroutine; every other time the yielded coroutine goes first. So neither a LIFO stream
     * of new local work nor a stream of outside or fair-queue work holds a yielded coroutine
     * back for ever (the normal path serves the yield queue only when all of them are empty),
     * nor a yield loop the oldest local task.
     */
    private fun pollPeriodic(): Runnable? {
        val w = worker
        w.timerDuty.pollDueTimers()?.let { return it }
        yieldedFirst = !yieldedFirst
        if (yieldedFirst) w.yields.pollOldest()?.let { w.counters.countLocalPop(); return it }
        pollGlobal()?.let { return it }
        pool.fair.poll()?.let { return it }
        val task = w.deque.pollOldest() ?: w.yields.pollOldest()
        if (task != null) w.counters.countLocalPop()
        return task
    }

    /**
     * The oldest coroutine in the yield queue. Once per round of that queue (every
     * `yields.size()` polls), first [Thief.stealHalf] from another worker's yield queue into
     * it, else from another worker's deque onto this one's (coroutines not yet started).
     * Without that, a worker that stole a single coroutine would run it alone to its end, yield
     * after yield, while another worker round-robins hundreds, or holds one yielded coroutine
     * while it is stuck in a task: each worker would be fair only to its own coroutines.
     */
    private fun pollYielded(): Runnable? {
        val w = worker
        if (w.yields.isEmpty()) return null // nothing yielded here: stealing is scanOthers()'s job
        if (++yieldTick >= w.yields.size()) {
            yieldTick = 0
            (w.thief.stealHalf(yielded = true) ?: w.thief.stealHalf(yielded = false))?.let { return it }
        }
        val task = w.yields.pollOldest()
        if (task != null) w.counters.countLocalPop()
        return task
    }

    /**
     * An extra worker that is surplus, before shutdown: moves its yielded coroutines, oldest
     * first, to the global queue, so that it can go idle (an idle extra worker is not
     * re-scanned) and the workers that stay serve them. While it is needed, an extra worker
     * keeps its own yield queue like a core worker: it may be running in place of one for a
     * long time (an extra that went idle last is the first an ordinary wake-up pops).
     *
     * After shutdown the global queue refuses offers, so the caller does not hand over then and
     * the extra runs its yielded coroutines itself. If shutdown closes the queue during the
     * hand-over, the refused task (the oldest left) is returned, to be run now: pushed back, it
     * would go to the newest end, and a hand-over before every task would keep moving the
     * oldest coroutine to the back, so it would never run. Once the pool is stopping it is
     * pushed back instead, and rejected when this worker exits.
     */
    private fun handOverYields(): Runnable? {
        var handed = false
        var refused: Runnable? = null
        val yields = worker.yields
        while (true) {
            val task = yields.pollOldest() ?: break
            if (!pool.global.offer(task)) {
                if (pool.isStopping()) yields.push(task) else refused = task
                break
            }
            handed = true
        }
        // One signal for the lot, after the offers, as every publication ends (docs/parking.md);
        // until then this worker, active, holds the obligation to look at the queues.
        if (handed) pool.signalAfterGlobalOffer()
        return refused
    }

    /**
     * One step of the search's spin-waits; true, cut short, as soon as [keyed] holds a task
     * ([keyed]: this worker's keyed queue; null for an extra worker, and for one that has not
     * run keyed work yet, which finds its first keyed task at a steal round or when it parks).
     * Only this worker can run keyed work, and an offer wakes it only when it is parked, not
     * while it searches, so it looks between spin-waits: an acquire read of the node the
     * offerer links (`KeyedQueue.offer`'s release), a line that stays in this core's cache until
     * an offer writes it. Looking only at the steal rounds, up to 8 steps apart, made a pair of
     * actors on two workers pay several microseconds a message
     * (docs/investigations/2026-12-03-keyed-hand-off-to-a-searcher.md).
     */
    private fun spinUntilKeyed(keyed: KeyedQueue?): Boolean {
        for (k in 0 until SPIN_WAITS_PER_STEP) {
            if (keyed != null && keyed.hasLinkedTask()) return true
            Thread.onSpinWait()
        }
        return false
    }

    private fun pollKeyed(keyed: KeyedQueue): Runnable? =
        keyed.poll()?.also { worker.counters.countKeyedPop() }

    /**
     * Takes a run of up to [GLOBAL_BATCH] tasks from the global queue with one CAS: runs the
     * oldest now and pushes the rest onto the own deque (newest first, so they pop in FIFO
     * order and stay stealable), then publishes them like any push.
     */
    fun pollGlobal(): Runnable? {
        val n = pool.global.pollBatch(batch)
        if (n == 0) return null
        worker.counters.countGlobalPop()
        val deque = worker.deque
        for (k in n - 1 downTo 1) {
            deque.push(batch[k]!!)
            batch[k] = null
        }
        val first = batch[0]!!
        batch[0] = null
        if (n > 1) pool.signalAfterPublish()
        return first
    }

    private companion object {
        /** Tasks after which a core worker swaps the order of its keyed queue and shared work. */
        const val KEYED_SWAP = 32

        /** Tasks taken from the global queue in one claim. */
        const val GLOBAL_BATCH = 32

        /** Spin-waits in one step of a search (about 1.6 us), the unit of `PoolConfig.spinRounds`. */
        const val SPIN_WAITS_PER_STEP = 64

        /**
         * A `Thread.yield()` in a search that takes longer than this gave the core to other
         * threads for a while: the searcher parks (a yield with nobody else to run cost about 2.5 us
         * on a 2-vCPU VM).
         */
        const val CONTENDED_YIELD_NANOS = 100_000L

        /** Most steps between two steal rounds of a search (the gap doubles from 1). */
        const val MAX_STEPS_BETWEEN_ROUNDS = 8
    }
}
