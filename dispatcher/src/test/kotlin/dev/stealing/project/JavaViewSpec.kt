package dev.stealing.project

import dev.stealing.StealingDispatcher
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldBeEmpty
import io.kotest.matchers.collections.shouldContain
import io.kotest.matchers.shouldBe
import java.io.File
import java.lang.reflect.Executable
import java.lang.reflect.GenericArrayType
import java.lang.reflect.Member
import java.lang.reflect.Modifier
import java.lang.reflect.ParameterizedType
import java.lang.reflect.Type
import java.lang.reflect.WildcardType
import kotlin.reflect.KVisibility

// The API as a Java user sees it: what javac lets a caller name and what an IDE completes. Kotlin
// compiles `internal` members as public (with a `$module` suffix on their names) and loses the
// generic signature of some declarations, and neither shows in the Kotlin view that ApiSpec
// lists; this spec reads the compiled classes of the API package the way javac does (public and
// protected, not synthetic: a `@JvmSynthetic` member is invisible to Java source) and fails on
// - a member whose name has a '$' (a Kotlin `internal` member, public in the bytecode);
// - a constructor or method that Kotlin declares `internal` or `private` and the bytecode makes
//   public (an `internal constructor` keeps its name; so does a `@PublishedApi` function);
// - a type of `dev.stealing.internal` anywhere in a member's signature, or as a supertype;
// - a raw generic type (a generic class used without its type arguments) in a signature.

/** Supertypes from the engine that Java sees, each with the reason it must be there. */
private val allowedEngineSupertypes = mapOf(
    // Kotlin allows no public subclass of an internal class, so the engine's task is a public
    // class in a package the module does not export, with constructor and members hidden from
    // Java; javadoc leaves it out of ForkedTask's page (JavadocStubs).
    "dev.stealing.ForkedTask" to "dev.stealing.internal.join.JoinableTask",
)

private fun apiPackageClasses(): List<Class<*>> {
    val root = File(StealingDispatcher::class.java.protectionDomain.codeSource.location.toURI())
    val dir = File(root, "dev/stealing")
    val loader = StealingDispatcher::class.java.classLoader
    return dir.listFiles { f -> f.isFile && f.name.endsWith(".class") }!!
        .map { Class.forName("dev.stealing." + it.name.removeSuffix(".class"), false, loader) }
        .filter { !it.isSynthetic && Modifier.isPublic(it.modifiers) && isVisibleNesting(it) }
        .sortedBy { it.name }
}

/** A nested class is visible to Java only if every class around it is public too. */
private fun isVisibleNesting(c: Class<*>): Boolean {
    var outer = c.enclosingClass
    while (outer != null) {
        if (!Modifier.isPublic(outer.modifiers)) return false
        outer = outer.enclosingClass
    }
    return c.enclosingMethod == null && c.enclosingConstructor == null
}

private fun isEngine(c: Class<*>): Boolean = c.name.startsWith("dev.stealing.internal.")

/** Every class a (generic) type names, and its raw uses of generic classes, as messages. */
private fun problemsOf(type: Type, where: String, out: MutableList<String>) {
    when (type) {
        is Class<*> -> {
            val c = generateSequence(type) { it.componentType }.last()
            if (isEngine(c)) out += "$where: the engine type ${c.name}"
            // A generic class as a plain Class in a generic signature is a raw use. Class<?>
            // literals are not ours.
            if (c.typeParameters.isNotEmpty() && c != Class::class.java) out += "$where: raw ${c.name}"
        }
        is ParameterizedType -> {
            val raw = type.rawType as Class<*>
            if (isEngine(raw)) out += "$where: the engine type ${raw.name}"
            type.actualTypeArguments.forEach { problemsOf(it, where, out) }
        }
        is GenericArrayType -> problemsOf(type.genericComponentType, where, out)
        is WildcardType -> (type.upperBounds + type.lowerBounds).forEach { problemsOf(it, where, out) }
        // Type variables: their bounds are declared once, on the class or method.
    }
}

private fun javaVisible(m: Member): Boolean =
    !m.isSynthetic && (Modifier.isPublic(m.modifiers) || Modifier.isProtected(m.modifiers)) &&
        !(m is java.lang.reflect.Method && m.isBridge)

/** What Java sees of [c] that it should not: one message per problem. */
internal fun javaViewProblems(c: Class<*>): List<String> {
    val out = ArrayList<String>()
    c.genericSuperclass?.let { s ->
        val raw = (s as? ParameterizedType)?.rawType as? Class<*> ?: s as? Class<*>
        if (raw != null && isEngine(raw) && allowedEngineSupertypes[c.name] != raw.name) out += "${c.name}: extends the engine's ${raw.name}"
    }
    c.genericInterfaces.forEach { problemsOf(it, "${c.name} implements", out) }
    val members = c.declaredConstructors.toList() + c.declaredMethods + c.declaredFields
    for (m in members.filter { javaVisible(it as Member) }) {
        val member = m as Member
        val where = if (m is java.lang.reflect.Constructor<*>) "${c.name} constructor" else "${c.name}.${member.name}"
        if (m !is java.lang.reflect.Constructor<*> && '$' in member.name) out += "$where: a name with '$' (a Kotlin internal member?)"
        val kotlinVisibility = functionVisibility(member)
        if (m is Executable && (kotlinVisibility == KVisibility.INTERNAL || kotlinVisibility == KVisibility.PRIVATE)) {
            val parameters = m.parameterTypes.joinToString(", ", "(", ")") { it.simpleName }
            out += "$where$parameters: ${kotlinVisibility.name.lowercase()} in Kotlin, public to Java"
        }
        when (m) {
            is Executable -> {
                if (m is java.lang.reflect.Method) problemsOf(m.genericReturnType, "$where returns", out)
                m.genericParameterTypes.forEach { problemsOf(it, "$where takes", out) }
            }
            is java.lang.reflect.Field -> problemsOf(m.genericType, "$where (field)", out)
        }
    }
    return out
}

class JavaViewSpec : FunSpec({
    test("Java sees no Kotlin-internal member, no engine type and no raw generic type in the API package") {
        val classes = apiPackageClasses()
        withClue("the API package's classes: ${classes.map { it.simpleName }}") {
            classes.map { it.name } shouldContain "dev.stealing.StealingDispatcher"
        }
        val problems = classes.flatMap { javaViewProblems(it) }
        withClue(problems.joinToString("\n")) { problems.shouldBeEmpty() }
    }

    test("the check finds each kind of problem (on a class written for it, JavaViewProbe)") {
        val problems = javaViewProblems(JavaViewProbe::class.java)
        withClue(problems.joinToString("\n")) {
            problems.count { "a name with '$'" in it } shouldBe 1
            problems.count { "the engine type dev.stealing.internal.queue.WorkDeque" in it } shouldBe 1
            problems.count { "raw java.util.List" in it } shouldBe 1
            problems.size shouldBe 3
        }
        val kotlinProblems = javaViewProblems(KotlinViewProbe::class.java)
        withClue(kotlinProblems.joinToString("\n")) {
            kotlinProblems.count { "internal in Kotlin, public to Java" in it } shouldBe 1
            kotlinProblems.size shouldBe 1
        }
    }
})

/** JavaViewSpec's self-check from Kotlin: an `internal constructor`, public in the bytecode. */
class KotlinViewProbe internal constructor(val size: Int) {
    /** Fine: public in Kotlin and Java. */
    fun twice(): Int = size * 2
}
