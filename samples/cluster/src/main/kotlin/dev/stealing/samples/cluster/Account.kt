package dev.stealing.samples.cluster

import org.apache.pekko.actor.typed.ActorRef
import org.apache.pekko.actor.typed.Behavior
import org.apache.pekko.actor.typed.javadsl.Behaviors
import org.apache.pekko.cluster.sharding.typed.javadsl.EntityTypeKey

/** Messages that travel between nodes: serialized as CBOR by Jackson (application.conf binds it). */
interface CborSerializable

/**
 * A bank account as a sharded entity: its balance lives in the entity, on whichever node holds
 * its shard, and only its own actor touches it, so it needs no lock. Each reply says which node
 * and which thread ran the command: the node runs its actors on a StealingDispatcher with
 * affinity, so an account keeps one worker thread.
 */
object Account {
    val TYPE_KEY: EntityTypeKey<Command> = EntityTypeKey.create(Command::class.java, "Account")

    sealed interface Command : CborSerializable

    /** Adds [amount] (negative: a withdrawal, refused if the balance would go below zero). */
    data class Change(val amount: Long, val replyTo: ActorRef<Balance>) : Command

    /** The balance after a command, and where the command ran. */
    data class Balance(val accountId: String, val balance: Long, val refused: Boolean, val node: String, val thread: String) : CborSerializable

    fun create(accountId: String, node: String): Behavior<Command> = Behaviors.setup {
        var balance = 0L
        Behaviors.receive(Command::class.java)
            .onMessage(Change::class.java) { c ->
                val refused = balance + c.amount < 0
                if (!refused) balance += c.amount
                c.replyTo.tell(Balance(accountId, balance, refused, node, Thread.currentThread().name))
                Behaviors.same()
            }
            .build()
    }
}
