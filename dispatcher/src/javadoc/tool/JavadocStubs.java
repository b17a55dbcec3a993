import com.sun.source.tree.ClassTree;
import com.sun.source.tree.CompilationUnitTree;
import com.sun.source.tree.Tree;
import com.sun.source.util.JavacTask;
import com.sun.source.util.SourcePositions;
import com.sun.source.util.Trees;

import javax.tools.JavaCompiler;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Turns the Java stubs that kapt generates from the Kotlin sources into the sources the JDK's
 * javadoc documents: the library's API as Java sees it, with its KDoc rewritten as javadoc.
 *
 * <pre>
 * javac -d target/javadoc-tool -sourcepath src/javadoc/tool src/javadoc/tool/JavadocStubs.java
 * java -cp target/javadoc-tool JavadocStubs STUBS API_LISTING KOTLIN_SOURCES PACKAGE_DOC OUT
 * </pre>
 *
 * <p>The steps, one class each: {@link ApiListing} reads the listing, {@link KotlinSourceDocs}
 * the KDoc that the stubs lack, {@link ApiModel} decides what is documented, {@link StubRewriter}
 * edits each stub, and {@link Kdoc} with {@link KdocConverter} turns KDoc into javadoc.
 *
 * <ul>
 *   <li>Only the API package (the directory of PACKAGE_DOC's package) is kept, and in it only
 *       the classes and members of the API listing (api/stealing-dispatcher.api, kept up to date
 *       by ApiSpec): Kotlin's internal declarations, which are public in the bytecode, and
 *       private members are dropped; a constructor that is not API becomes private (dropping it
 *       would give the class javadoc's implicit public constructor).
 *   <li>Members whose Java signature uses a type of the {@code kotlin} packages (suspend
 *       functions, Kotlin function types, {@code kotlin.Unit}, the coroutine context of the
 *       kotlinx dispatcher hooks) are Kotlin-facing and dropped, as are companion objects (their
 *       members that Java may call are static methods of the outer class).
 *   <li>KDoc's Markdown becomes HTML, links become {@code {@link}} where the target is
 *       documented here and code otherwise, and a class's {@code @property} and {@code @param}
 *       tags document the constructors' parameters and the property getters.
 * </ul>
 */
public class JavadocStubs {

    public static void main(String[] args) throws IOException {
        if (args.length != 5) {
            throw new IllegalArgumentException("usage: JavadocStubs STUBS API_LISTING KOTLIN_SOURCES PACKAGE_DOC OUT");
        }
        Path stubs = Path.of(args[0]);
        Map<String, Set<String>> api = ApiListing.read(Path.of(args[1]));
        Path packageDoc = Path.of(args[3]);
        Path out = Path.of(args[4]);
        String pkg = packageName(Files.readString(packageDoc));
        Path kotlinSources = Path.of(args[2]).resolve(pkg.replace('.', '/'));
        Map<String, String> enumEntryDocs = KotlinSourceDocs.enumEntries(kotlinSources);
        Path pkgDir = stubs.resolve(pkg.replace('.', '/'));

        List<Path> files;
        try (Stream<Path> s = Files.list(pkgDir)) {
            files = s.filter(p -> p.toString().endsWith(".java")).sorted().collect(Collectors.toList());
        }
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        StandardJavaFileManager fm = javac.getStandardFileManager(null, Locale.ROOT, StandardCharsets.UTF_8);
        JavacTask task = (JavacTask) javac.getTask(null, fm, d -> { }, List.of("-proc:none"), null,
            fm.getJavaFileObjectsFromPaths(files));
        List<CompilationUnitTree> units = new ArrayList<>();
        task.parse().forEach(units::add);
        SourcePositions positions = Trees.instance(task).getSourcePositions();

        ApiModel model = new ApiModel(pkg, api);
        model.enumEntryDocs.putAll(enumEntryDocs);
        model.propertyDocs.putAll(KotlinSourceDocs.properties(kotlinSources));
        for (CompilationUnitTree unit : units) {
            for (Tree t : unit.getTypeDecls()) if (t instanceof ClassTree) model.scan((ClassTree) t, pkg, "");
        }

        Path outPkg = out.resolve(pkg.replace('.', '/'));
        deleteTree(out);
        Files.createDirectories(outPkg);
        int written = 0;
        for (CompilationUnitTree unit : units) {
            String source = unit.getSourceFile().getCharContent(true).toString();
            StubRewriter r = new StubRewriter(source, positions, unit, model);
            String result = r.rewrite();
            if (result == null) continue;
            Path file = Path.of(unit.getSourceFile().toUri());
            Files.writeString(outPkg.resolve(file.getFileName().toString()), result);
            written++;
        }
        Files.copy(packageDoc, outPkg.resolve("package-info.java"));
        System.out.println("JavadocStubs: " + written + " classes of " + pkg + " written to " + out);
    }

    private static String packageName(String packageInfo) {
        Matcher m = Pattern.compile("(?m)^package\\s+([\\w.]+)\\s*;").matcher(packageInfo);
        if (!m.find()) throw new IllegalArgumentException("no package declaration in the package documentation");
        return m.group(1);
    }

    private static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) return;
        try (Stream<Path> s = Files.walk(dir)) {
            for (Path p : s.sorted((a, b) -> b.compareTo(a)).collect(Collectors.toList())) Files.delete(p);
        }
    }

}
