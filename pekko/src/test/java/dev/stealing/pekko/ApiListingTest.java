package dev.stealing.pekko;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.lang.reflect.Member;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Type;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The module's public binary API, as listed in api/stealing-dispatcher-pekko.api (committed): an
 * accidental API change fails the build here, and the javadoc jar documents exactly the listed
 * classes and members (the library's JavadocStubs reads the listing). After an intended change:
 * <pre>
 * mvn -B -ntp -pl pekko -am test -Dtest=ApiListingTest -Dsurefire.failIfNoSpecifiedTests=false -Dapi.update=true
 * </pre>
 *
 * <p>Which classes are public is read from the Kotlin sources: the module compiles in explicit
 * API mode, so every public class says {@code public}, and Kotlin's {@code internal} classes,
 * public in the bytecode, do not. Their members are read off the compiled classes: public and
 * protected constructors, methods and fields, without synthetic ones and without Kotlin's
 * internal members (their names are mangled with {@code $}).
 */
class ApiListingTest {
    private static final Path LISTING = Path.of("api/stealing-dispatcher-pekko.api");
    private static final Path SOURCES = Path.of("src/main/kotlin/dev/stealing/pekko");
    private static final Pattern PUBLIC_CLASS =
        Pattern.compile("^public\\s+(?:(?:abstract|open|sealed|data|enum|fun|annotation)\\s+)*(?:class|interface|object)\\s+(\\w+)",
            Pattern.MULTILINE);

    @Test
    void thePublicApiMatchesTheListing() throws Exception {
        String actual = listing();
        if ("true".equals(System.getProperty("api.update"))) {
            Files.writeString(LISTING, actual);
        }
        String expected = Files.exists(LISTING) ? Files.readString(LISTING) : "";
        assertEquals(expected, actual, "The public API differs from " + LISTING + "; after an intended change, run "
            + "mvn -B -ntp -pl pekko -am test -Dtest=ApiListingTest -Dsurefire.failIfNoSpecifiedTests=false -Dapi.update=true");
    }

    @Test
    void selfCheckTheSourcesNameThePublicClassesAndOnlyThem() throws Exception {
        Set<String> names = publicClassNames();
        assertTrue(names.contains("StealingExecutorServiceConfigurator"), names.toString());
        assertTrue(!names.contains("PoolRegistry") && !names.contains("PekkoExecutorService"), names.toString());
    }

    static String listing() throws IOException, ClassNotFoundException, URISyntaxException {
        StringBuilder out = new StringBuilder();
        for (String simpleName : publicClassNames()) {
            Class<?> c = Class.forName("dev.stealing.pekko." + simpleName);
            appendClass(out, c);
            for (Class<?> nested : c.getDeclaredClasses()) {
                if (Modifier.isPublic(nested.getModifiers())) appendClass(out, nested);
            }
        }
        return out.toString();
    }

    private static Set<String> publicClassNames() throws IOException {
        Set<String> names = new TreeSet<>();
        try (Stream<Path> files = Files.list(SOURCES)) {
            for (Path f : files.filter(p -> p.toString().endsWith(".kt")).collect(Collectors.toList())) {
                Matcher m = PUBLIC_CLASS.matcher(Files.readString(f));
                while (m.find()) names.add(m.group(1));
            }
        }
        return names;
    }

    private static void appendClass(StringBuilder out, Class<?> c) {
        List<String> supertypes = new ArrayList<>();
        Type superclass = c.getGenericSuperclass();
        if (superclass != null && superclass != Object.class) supertypes.add(superclass.getTypeName());
        for (Type t : c.getGenericInterfaces()) supertypes.add(t.getTypeName());
        out.append(c.toGenericString());
        if (!supertypes.isEmpty()) out.append(" : ").append(String.join(", ", supertypes));
        out.append('\n');
        List<Member> members = new ArrayList<>();
        members.addAll(List.of(c.getDeclaredConstructors()));
        members.addAll(List.of(c.getDeclaredMethods()));
        members.addAll(List.of(c.getDeclaredFields()));
        Set<String> lines = new TreeSet<>();
        for (Member m : members) {
            int mod = m.getModifiers();
            if (!(Modifier.isPublic(mod) || Modifier.isProtected(mod)) || m.isSynthetic() || m.getName().contains("$")) continue;
            if (m instanceof Method && ((Method) m).isBridge()) continue;
            lines.add(memberLine(m));
        }
        for (String line : lines) out.append("  ").append(line).append('\n');
    }

    /** As the library's ApiSpec writes a member: its generic signature, the class named once, on the class line. */
    private static String memberLine(Member m) {
        String qualified = m.getDeclaringClass().getName() + "." + m.getName();
        if (m instanceof Method) return ((Method) m).toGenericString().replaceFirst(Pattern.quote(qualified), m.getName());
        if (m instanceof Field) return ((Field) m).toGenericString().replaceFirst(Pattern.quote(qualified), m.getName());
        return ((Constructor<?>) m).toGenericString();
    }
}
