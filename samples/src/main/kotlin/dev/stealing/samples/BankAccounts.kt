package dev.stealing.samples

import dev.stealing.StealingDispatcher
import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.sync.Mutex
import kotlinx.coroutines.sync.withLock
import kotlinx.coroutines.withContext
import java.util.SplittableRandom

/**
 * What `affinity(key)` buys: thread confinement and order, not speed. 10,000 accounts keep
 * their balances in a plain `LongArray` (no lock, no atomic), and 1,000 client coroutines make
 * 1,000,000 transfers between pseudo-random accounts (seeded, the same list every run). A
 * transfer is two keyed steps: the debit in `withContext(pool.affinity(from))` (refused if it
 * would overdraw the account) and the credit in `withContext(pool.affinity(to))`. Every step
 * for one account runs on the one worker thread that serves its key, one at a time, in the
 * order the steps were dispatched, so a balance is only ever touched by one thread and needs no
 * lock. The program records the thread that first touched each account and checks it on every
 * later touch; at the end it checks that the total money is unchanged, no balance is negative,
 * and every accepted debit was credited.
 *
 * For comparison the same transfers run with a kotlinx `Mutex` per account on
 * `Dispatchers.Default`: just as correct, but an account is touched by whichever thread holds
 * its lock (the program counts the accounts touched by more than one thread). And with cheap
 * steps and rarely contended locks the mutex is several times faster: it seldom suspends,
 * while every keyed transfer is four dispatches (to the payer's worker, back to the client, to
 * the payee's worker, back), which the program counts and prints. Use affinity where
 * confinement matters (state that is not thread-safe, per-key order, actors), not to go faster.
 *
 * Run: `mvn -q -pl samples -am compile exec:java -Dexec.mainClass=dev.stealing.samples.BankAccountsKt`
 */
fun main() {
    val accounts = 10_000
    val transfers = 1_000_000
    val clients = 1_000
    val initialBalance = 1_000L
    val plan = TransferPlan(accounts, transfers, maxAmount = 600, seed = 42)
    val rounds = 4 // the first one is a warm-up
    val parallelism = Runtime.getRuntime().availableProcessors()

    println("bank accounts: %,d accounts of %,d, %,d transfers of 1..%d by %,d client coroutines, %d cores, %d rounds (first is warm-up)"
        .format(accounts, initialBalance, transfers, plan.maxAmount, clients, parallelism, rounds))
    val pool = StealingDispatcher(parallelism, "bank")
    val times = linkedMapOf<String, MutableList<Double>>()
    val touchedByMany = linkedMapOf<String, Int>() // per mode, in the last round
    try {
        repeat(rounds) { round ->
            for (mode in listOf<TransferMode>(AffinityMode(pool, accounts), MutexMode(accounts))) {
                val bank = Bank(accounts, initialBalance)
                val s0 = pool.stats()
                val start = System.nanoTime()
                val outcome = runBlocking { withContext(mode.clientDispatcher) { mode.run(bank, plan, clients) } }
                val ms = (System.nanoTime() - start) / 1e6
                val s1 = pool.stats()
                bank.check(outcome, plan, mode)?.let { fail("${mode.name}: $it") }
                println("  round %d  %-44s %8.1f ms   accepted %,d, refused %,d, accounts touched by >1 thread: %,d"
                    .format(round, mode.name, ms, outcome.accepted, outcome.refused, bank.multiThreadAccounts()))
                if (mode is AffinityMode) {
                    val tasks = s1.executed - s0.executed
                    println("           pool ran %,d tasks (%.2f per transfer: debit, back to the client, credit, back), %,d keyed, %,d parks"
                        .format(tasks, tasks.toDouble() / plan.size, s1.affinityPops - s0.affinityPops, s1.parks - s0.parks))
                }
                if (round > 0) times.getOrPut(mode.name) { ArrayList() } += ms
                touchedByMany[mode.name] = bank.multiThreadAccounts()
            }
        }
    } finally {
        pool.close()
    }
    println("checked every round: total money unchanged (%,d), no negative balance, every accepted debit credited"
        .format(accounts * initialBalance))
    println("what affinity bought: accounts touched by more than one thread: %s"
        .format(touchedByMany.entries.joinToString { (name, n) -> "%,d with %s".format(n, name) }))
    val base = times.values.first().medianOf()
    println("what it cost (median time; not a speed-up):")
    for ((name, list) in times) {
        val m = list.medianOf()
        println("  %-44s %8.1f ms   %.2f x affinity   (%.0f transfers/ms)".format(name, m, m / base, transfers / m))
    }
}

/** The transfers, generated once from a seed: `from[i]` pays `amount[i]` to `to[i]` (never itself). */
private class TransferPlan(accounts: Int, transfers: Int, val maxAmount: Int, seed: Long) {
    val from = IntArray(transfers)
    val to = IntArray(transfers)
    val amount = IntArray(transfers)

    init {
        val rnd = SplittableRandom(seed)
        for (i in 0 until transfers) {
            from[i] = rnd.nextInt(accounts)
            var t = rnd.nextInt(accounts - 1)
            if (t >= from[i]) t++ // any account but the payer
            to[i] = t
            amount[i] = 1 + rnd.nextInt(maxAmount)
        }
    }

    val size: Int get() = from.size
}

/**
 * The accounts: plain arrays, no locks, no atomics. Each slot is only touched by the step that
 * owns the account at the moment (its affinity worker, or the holder of its mutex).
 */
private class Bank(val accounts: Int, val initialBalance: Long) {
    val balance = LongArray(accounts) { initialBalance }

    /** The thread that first touched each account. */
    private val owner = arrayOfNulls<Thread>(accounts)

    /** Per account: touches by a thread other than its first one. */
    private val foreignTouches = IntArray(accounts)

    /** Per account: debits accepted and credits made (tallied by the step that owns the account, like the balance). */
    private val debits = IntArray(accounts)
    private val credits = IntArray(accounts)

    /** Records the current thread for [account]: call on every touch, from the step that owns it. */
    fun touch(account: Int) {
        val t = Thread.currentThread()
        val o = owner[account]
        if (o == null) {
            owner[account] = t
        } else if (o !== t) {
            foreignTouches[account]++
        }
    }

    /** Debits [amount] from [account] unless that would overdraw it; returns whether it did. */
    fun debit(account: Int, amount: Int): Boolean {
        touch(account)
        if (balance[account] < amount) return false
        balance[account] -= amount
        debits[account]++
        return true
    }

    fun credit(account: Int, amount: Int) {
        touch(account)
        balance[account] += amount
        credits[account]++
    }

    fun multiThreadAccounts(): Int = foreignTouches.count { it != 0 }

    /** Null if the books balance, else what is wrong. */
    fun check(outcome: TransferOutcome, plan: TransferPlan, mode: TransferMode): String? {
        val total = balance.sum()
        val negative = balance.indexOfFirst { it < 0 }
        return when {
            outcome.accepted + outcome.refused != plan.size.toLong() ->
                "${outcome.accepted} accepted + ${outcome.refused} refused != ${plan.size} transfers"
            debits.sum() != outcome.accepted.toInt() -> "${outcome.accepted} transfers accepted but ${debits.sum()} debits made"
            credits.sum() != outcome.accepted.toInt() -> "${outcome.accepted} transfers accepted but ${credits.sum()} credits made"
            total != accounts * initialBalance -> "total money is $total, expected ${accounts * initialBalance}"
            negative >= 0 -> "account $negative has a negative balance ${balance[negative]}"
            mode.oneThreadPerAccount && multiThreadAccounts() != 0 ->
                "${foreignTouches.sum()} touches from a thread other than the account's first (${multiThreadAccounts()} accounts)"
            else -> null
        }
    }
}

/** Counts summed over the clients (each client counts in locals, so no shared counter is contended). */
private class TransferOutcome(val accepted: Long, val refused: Long)

/** One way of making the transfers safe. */
private sealed class TransferMode {
    abstract val name: String

    /** Where the client coroutines run. */
    abstract val clientDispatcher: CoroutineDispatcher

    /** Whether this mode promises that one account is only ever touched by one thread. */
    abstract val oneThreadPerAccount: Boolean

    /** Debits [from] (refusing an overdraft), then credits [to]; returns whether it was accepted. */
    abstract suspend fun transfer(bank: Bank, from: Int, to: Int, amount: Int): Boolean

    /**
     * Runs the plan with [clients] concurrent client coroutines on the caller's dispatcher:
     * client c makes transfers c, c + clients, c + 2 * clients, ... one after another.
     */
    suspend fun run(bank: Bank, plan: TransferPlan, clients: Int): TransferOutcome {
        val accepted = LongArray(clients)
        val refused = LongArray(clients)
        coroutineScope {
            for (c in 0 until clients) launch {
                var ok = 0L
                var no = 0L
                var i = c
                while (i < plan.size) {
                    if (transfer(bank, plan.from[i], plan.to[i], plan.amount[i])) ok++ else no++
                    i += clients
                }
                accepted[c] = ok
                refused[c] = no
            }
        }
        return TransferOutcome(accepted.sum(), refused.sum())
    }
}

/** Keyed steps: each account's steps run on the worker that serves its key; the balances need no lock. */
private class AffinityMode(private val pool: StealingDispatcher, accounts: Int) : TransferMode() {
    override val name = "StealingDispatcher.affinity(account)"
    override val clientDispatcher: CoroutineDispatcher get() = pool
    override val oneThreadPerAccount = true

    /** One dispatcher per account, made once up front (`pool.affinity(account)` on every step would do too). */
    private val keyed = Array(accounts) { pool.affinity(it) }

    private fun on(account: Int): CoroutineDispatcher = keyed[account]

    override suspend fun transfer(bank: Bank, from: Int, to: Int, amount: Int): Boolean {
        val debited = withContext(on(from)) { bank.debit(from, amount) }
        if (!debited) return false
        withContext(on(to)) { bank.credit(to, amount) }
        return true
    }
}

/** The classic alternative: a kotlinx `Mutex` per account, clients on `Dispatchers.Default`. */
private class MutexMode(accounts: Int) : TransferMode() {
    override val name = "Mutex per account on Dispatchers.Default"
    override val clientDispatcher: CoroutineDispatcher get() = Dispatchers.Default
    override val oneThreadPerAccount = false
    private val locks = Array(accounts) { Mutex() }

    override suspend fun transfer(bank: Bank, from: Int, to: Int, amount: Int): Boolean {
        // One lock at a time (never both), so no lock ordering is needed and no deadlock is possible.
        val debited = locks[from].withLock { bank.debit(from, amount) }
        if (!debited) return false
        locks[to].withLock { bank.credit(to, amount) }
        return true
    }
}
