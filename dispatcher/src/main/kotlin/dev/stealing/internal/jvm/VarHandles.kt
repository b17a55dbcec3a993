package dev.stealing.internal.jvm

import java.lang.invoke.MethodHandles
import java.lang.invoke.VarHandle

/**
 * A [VarHandle] on the (usually private) field [name] of [owner]. Kotlin compiles companion
 * initialisers and nested classes into separate classes without nest-mate access, so the
 * lookup is widened to [owner] explicitly.
 */
internal fun fieldHandle(owner: Class<*>, name: String, type: Class<*>): VarHandle =
    MethodHandles.privateLookupIn(owner, MethodHandles.lookup()).findVarHandle(owner, name, type)
