package dev.stealing.internal.worker

import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.ints.shouldBeGreaterThanOrEqual
import java.lang.reflect.Field
import java.lang.reflect.Modifier

/**
 * Fields padded onto a cache line of their own keep their padding in the layout the running JVM
 * chose (HotSpot orders fields by its own rules, and may fill a superclass's gap with a
 * subclass's field). Offsets are read with `sun.misc.Unsafe`, as a layout tool does.
 */
class FieldLayoutSpec : FunSpec({
    test("a worker's nesting depth has 64 bytes of its own object on each side") {
        val fields = instanceFields(NestingDepth::class.java)
        val depth = fields.single { it.name == "depth" }
        val start = offset(depth)
        val end = fields.maxOf { offset(it) + size(it) } // the object ends here or a little later
        start shouldBeGreaterThanOrEqual 64 // bytes from the object's start: from any object before it
        (end - (start + size(depth))) shouldBeGreaterThanOrEqual 64 // to the object's end: to any object after it
    }
})

private fun instanceFields(type: Class<*>): List<Field> =
    generateSequence(type) { it.superclass }
        .flatMap { it.declaredFields.asSequence() }
        .filter { !Modifier.isStatic(it.modifiers) }
        .toList()

private fun size(f: Field): Int = when (f.type) {
    java.lang.Long.TYPE, java.lang.Double.TYPE -> 8
    Integer.TYPE, java.lang.Float.TYPE -> 4
    java.lang.Short.TYPE, Character.TYPE -> 2
    java.lang.Byte.TYPE, java.lang.Boolean.TYPE -> 1
    else -> 4 // a compressed reference; 8 without compressed references, which only widens the gaps
}

private val unsafe: Any = Class.forName("sun.misc.Unsafe").getDeclaredField("theUnsafe")
    .apply { isAccessible = true }.get(null)

private fun offset(f: Field): Int =
    (unsafe.javaClass.getMethod("objectFieldOffset", Field::class.java).invoke(unsafe, f) as Long).toInt()
