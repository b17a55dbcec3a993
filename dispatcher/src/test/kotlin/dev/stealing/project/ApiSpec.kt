package dev.stealing.project

import dev.stealing.StealingDispatcher
import io.kotest.assertions.fail
import io.kotest.core.spec.style.FunSpec
import java.io.File
import java.lang.reflect.Constructor
import java.lang.reflect.Field
import java.lang.reflect.Member
import java.lang.reflect.Method
import java.lang.reflect.Modifier
import kotlin.reflect.KMutableProperty
import kotlin.reflect.KProperty
import kotlin.reflect.KVisibility
import kotlin.reflect.full.companionObject
import kotlin.reflect.jvm.javaField
import kotlin.reflect.jvm.javaGetter
import kotlin.reflect.jvm.javaSetter
import kotlin.reflect.jvm.kotlinFunction
import kotlin.reflect.jvm.kotlinProperty

// The library's public binary API, as listed in api/stealing-dispatcher.api (committed): an
// accidental API change fails `mvn verify` here. After an intended change, regenerate the listing
//   mvn -B -ntp -pl dispatcher -am test -Dtest=ApiSpec -Dsurefire.failIfNoSpecifiedTests=false -Dapi.update=true
// and commit it with the change (the diff is the API change, for review).
//
// The listing is read off the compiled classes (target/classes) by reflection: every public or
// protected class (Kotlin visibility, so `internal` classes, public in bytecode, are left out)
// and its public and protected constructors, methods and fields as the JVM sees them (what Java
// callers and binary compatibility depend on), synthetic and internal (name-mangled or
// `internal` in Kotlin) members excluded. One line per class, then one indented line per
// member, each group sorted.

private val apiFile = File("api/stealing-dispatcher.api")
private const val UPDATE_COMMAND =
    "mvn -B -ntp -pl dispatcher -am test -Dtest=ApiSpec -Dsurefire.failIfNoSpecifiedTests=false -Dapi.update=true"

/** The API listing of the classes compiled from src/main (the directory holding StealingDispatcher). */
internal fun apiListing(): String {
    val root = File(StealingDispatcher::class.java.protectionDomain.codeSource.location.toURI())
    check(root.isDirectory) { "expected the compiled classes in a directory, got $root" }
    val loader = StealingDispatcher::class.java.classLoader
    val classes = root.walkTopDown().filter { it.isFile && it.name.endsWith(".class") }
        .map { it.relativeTo(root).path.removeSuffix(".class").replace(File.separatorChar, '.') }
        .filter { it != "module-info" && !it.endsWith("package-info") }
        .map { Class.forName(it, false, loader) }
        .filter { isApiClass(it) }
        .sortedBy { it.name }
    return buildString {
        for (c in classes) {
            val members = apiMembers(c)
            if (kotlinKind(c) == FILE_FACADE && members.isEmpty()) continue
            appendLine(classLine(c))
            members.forEach { appendLine("  $it") }
        }
    }
}

// kotlin.Metadata.kind: 1 class, 2 file facade, 3 synthetic class (lambdas, when-mappings),
// 4 multi-file facade, 5 multi-file part. null: not compiled from Kotlin.
private const val FILE_FACADE = 2

private fun kotlinKind(c: Class<*>): Int? = c.getAnnotation(Metadata::class.java)?.kind

private fun isVisible(modifiers: Int) = Modifier.isPublic(modifiers) || Modifier.isProtected(modifiers)

private fun isKotlinVisible(v: KVisibility?) = v == null || v == KVisibility.PUBLIC || v == KVisibility.PROTECTED

private fun isApiClass(c: Class<*>): Boolean {
    if (c.isSynthetic || c.isAnonymousClass || c.isLocalClass || !isVisible(c.modifiers)) return false
    if (c.enclosingClass != null && !isApiClass(c.enclosingClass)) return false
    return when (kotlinKind(c)) {
        1 -> isKotlinVisible(runCatching { c.kotlin.visibility }.getOrNull())
        FILE_FACADE, null -> true
        else -> false
    }
}

private fun typeName(t: java.lang.reflect.Type) = t.typeName

private fun classLine(c: Class<*>): String {
    val supertypes = listOfNotNull(c.genericSuperclass?.takeIf { it != Any::class.java })
        .plus(c.genericInterfaces)
        .map { typeName(it) }
    return c.toGenericString() + if (supertypes.isEmpty()) "" else " : " + supertypes.joinToString(", ")
}

private fun apiMembers(c: Class<*>): List<String> {
    val kotlinClass = if (kotlinKind(c) == 1) c.kotlin else null
    // Property accessors and fields are looked up through their property; the fields of a
    // companion's properties (const val, @JvmField) live in the outer class, and are only as
    // visible as the companion.
    val accessorVisibility = HashMap<Member, KVisibility?>()
    if (kotlinClass != null) {
        runCatching {
            for (p in kotlinClass.members.filterIsInstance<KProperty<*>>()) {
                p.javaGetter?.let { accessorVisibility[it] = p.visibility }
                p.javaField?.let { accessorVisibility[it] = p.visibility }
                if (p is KMutableProperty<*>) p.javaSetter?.let { accessorVisibility[it] = p.setter.visibility ?: p.visibility }
            }
            val companion = kotlinClass.companionObject
            if (companion != null) {
                for (p in companion.members.filterIsInstance<KProperty<*>>()) {
                    val v = if (isKotlinVisible(companion.visibility)) p.visibility else companion.visibility
                    p.javaField?.let { accessorVisibility[it] = v }
                }
            }
        }
    }
    val members: List<Member> = c.declaredConstructors.toList<Member>() + c.declaredMethods + c.declaredFields
    return members
        .filter { isVisible(it.modifiers) && !it.isSynthetic && !(it is Method && it.isBridge) }
        .filter { '$' !in it.name } // internal members are name-mangled (name$module)
        .filter { isKotlinVisible(kotlinVisibility(it, accessorVisibility)) }
        .map { memberLine(it) }
        .sorted()
}

private fun kotlinVisibility(m: Member, accessors: Map<Member, KVisibility?>): KVisibility? = when (m) {
    is Field -> runCatching { accessors[m] ?: m.kotlinProperty?.visibility }.getOrNull()
    else -> functionVisibility(m) ?: accessors[m]
}

/** The Kotlin visibility of method or constructor [m] as declared; null for a field, a property accessor or Java code. */
internal fun functionVisibility(m: Member): KVisibility? = runCatching {
    when (m) {
        is Method -> m.kotlinFunction?.visibility
        is Constructor<*> -> m.kotlinFunction?.visibility
        else -> null
    }
}.getOrNull()

private fun memberLine(m: Member): String {
    // toGenericString() qualifies a method or field name with its class; the class line says it.
    val qualified = m.declaringClass.name + "." + m.name
    return when (m) {
        is Method -> m.toGenericString().replaceFirst(qualified, m.name)
        is Field -> m.toGenericString().replaceFirst(qualified, m.name)
        is Constructor<*> -> m.toGenericString()
        else -> m.toString()
    }
}

/** The lines of a listing, each member line prefixed with its class (for a readable diff). */
private fun qualified(listing: String): List<String> {
    var owner = ""
    return listing.lines().filter { it.isNotBlank() }.map { line ->
        if (line.startsWith("  ")) "$owner:${line.trimStart()}" else line.also { owner = it.substringBefore(" : ").substringAfterLast(' ') }
    }
}

/** Every Kotlin class of the library and the Kotlin metadata version it was written with. */
private fun metadataVersions(): Map<String, String> {
    val root = File(StealingDispatcher::class.java.protectionDomain.codeSource.location.toURI())
    val loader = StealingDispatcher::class.java.classLoader
    return root.walkTopDown().filter { it.isFile && it.name.endsWith(".class") }
        .map { it.relativeTo(root).path.removeSuffix(".class").replace(File.separatorChar, '.') }
        .filter { it != "module-info" }
        .mapNotNull { name -> Class.forName(name, false, loader).getAnnotation(Metadata::class.java)?.let { name to it.metadataVersion.take(2).joinToString(".") } }
        .toMap()
}

private fun versionParts(v: String) = v.split('.').map { it.toInt() }.let { it[0] * 1000 + it[1] }

class ApiSpec : FunSpec({
    // A compiler reads Kotlin metadata up to one minor version newer than itself, and a newer
    // compiler run with an older -language-version does not notice newer metadata: this is what
    // keeps consumers on the oldest supported compiler working (samples/apps/floor is built with
    // that compiler itself).
    test("the library is compiled for Kotlin consumers of kotlin.consumer.version") {
        val floor = System.getProperty("api.kotlinVersion")?.takeIf { it.isNotBlank() } ?: "2.2"
        val tooNew = metadataVersions().filterValues { versionParts(it) > versionParts(floor) }
        if (tooNew.isNotEmpty()) {
            fail(
                "${tooNew.size} classes carry Kotlin metadata newer than $floor (e.g. ${tooNew.entries.first()}): " +
                    "compile dispatcher's main sources with languageVersion/apiVersion \${kotlin.consumer.version}",
            )
        }
    }

    test("the public API matches api/stealing-dispatcher.api") {
        val actual = apiListing()
        if (System.getProperty("api.update") == "true") {
            apiFile.parentFile.mkdirs()
            apiFile.writeText(actual)
            return@test
        }
        val expected = if (apiFile.exists()) apiFile.readText() else ""
        if (actual != expected) {
            val old = qualified(expected)
            val new = qualified(actual)
            val removed = old.filter { it !in new }.map { "- $it" }
            val added = new.filter { it !in old }.map { "+ $it" }
            fail(
                "The public API differs from ${apiFile.path} (- listed, + compiled):\n" +
                    (removed + added).joinToString("\n").ifEmpty { "(same lines, different order or grouping)" } +
                    "\nIf the change is intended, regenerate the listing and commit it:\n  $UPDATE_COMMAND",
            )
        }
    }
})
