import com.sun.source.tree.ClassTree;
import com.sun.source.tree.CompilationUnitTree;
import com.sun.source.tree.MethodTree;
import com.sun.source.tree.Tree;
import com.sun.source.tree.VariableTree;
import com.sun.source.util.JavacTask;
import com.sun.source.util.SourcePositions;
import com.sun.source.util.Trees;

import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
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
 * java JavadocStubs.java STUBS API_LISTING KOTLIN_SOURCES PACKAGE_DOC OUT
 * </pre>
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
        Map<String, Set<String>> api = readApi(Path.of(args[1]));
        Path packageDoc = Path.of(args[3]);
        Path out = Path.of(args[4]);
        String pkg = packageName(Files.readString(packageDoc));
        Path kotlinSources = Path.of(args[2]).resolve(pkg.replace('.', '/'));
        Map<String, String> enumEntryDocs = enumEntryDocs(kotlinSources);
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

        Model model = new Model(pkg, api);
        model.enumEntryDocs.putAll(enumEntryDocs);
        model.propertyDocs.putAll(propertyDocs(kotlinSources));
        for (CompilationUnitTree unit : units) {
            for (Tree t : unit.getTypeDecls()) if (t instanceof ClassTree) model.scan((ClassTree) t, pkg, "");
        }

        Path outPkg = out.resolve(pkg.replace('.', '/'));
        deleteTree(out);
        Files.createDirectories(outPkg);
        int written = 0;
        for (CompilationUnitTree unit : units) {
            String source = unit.getSourceFile().getCharContent(true).toString();
            Rewriter r = new Rewriter(source, positions, unit, model);
            String result = r.rewrite();
            if (result == null) continue;
            Path file = Path.of(unit.getSourceFile().toUri());
            Files.writeString(outPkg.resolve(file.getFileName().toString()), result);
            written++;
        }
        Files.copy(packageDoc, outPkg.resolve("package-info.java"));
        System.out.println("JavadocStubs: " + written + " classes of " + pkg + " written to " + out);
    }

    /**
     * The KDoc of enum entries, by "Enum.ENTRY" (kapt's stubs leave it out): the entries at the
     * start of each "enum class Name {" body of the package's Kotlin sources.
     */
    static Map<String, String> enumEntryDocs(Path sources) throws IOException {
        Map<String, String> docs = new HashMap<>();
        List<Path> files;
        try (Stream<Path> s = Files.list(sources)) {
            files = s.filter(p -> p.toString().endsWith(".kt")).collect(Collectors.toList());
        }
        Pattern enumClass = Pattern.compile("\\benum\\s+class\\s+(\\w+)[^{]*\\{");
        Pattern entry = Pattern.compile("\\G\\s*(?:/\\*\\*(.*?)\\*/)?\\s*([A-Z][A-Z0-9_]*)\\s*(?:,|;|(?=\\}))", Pattern.DOTALL);
        for (Path file : files) {
            String text = Files.readString(file);
            Matcher e = enumClass.matcher(text);
            while (e.find()) {
                Matcher m = entry.matcher(text);
                m.region(e.end(), text.length());
                while (m.find()) {
                    if (m.group(1) != null) {
                        String doc = m.group(1).lines().map(l -> l.replaceFirst("^\\s*\\* ?", ""))
                            .collect(Collectors.joining("\n")).strip();
                        docs.put(e.group(1) + "." + m.group(2), doc);
                    }
                    m.region(m.end(), text.length());
                }
            }
        }
        return docs;
    }

    /**
     * The KDoc of the properties declared in each Kotlin file (by the file's name without .kt),
     * the first declaration of a name winning (a class's own before its companion's): kapt's
     * stubs leave it out of the getters of properties without a backing field.
     */
    static Map<String, Map<String, String>> propertyDocs(Path sources) throws IOException {
        Map<String, Map<String, String>> docs = new HashMap<>();
        List<Path> files;
        try (Stream<Path> s = Files.list(sources)) {
            files = s.filter(p -> p.toString().endsWith(".kt")).collect(Collectors.toList());
        }
        Pattern declaration = Pattern.compile(
            "\\G\\s*(?:@[\\w.:]+(?:\\([^)]*\\))?\\s*)*(?:(?:public|internal|protected|private|override|open|final|abstract|const|lateinit)\\s+)*va[lr]\\s+(\\w+)");
        for (Path file : files) {
            String text = Files.readString(file);
            Map<String, String> byName = new HashMap<>();
            for (int open = text.indexOf("/**"); open >= 0; open = text.indexOf("/**", open + 3)) {
                int close = text.indexOf("*/", open + 3);
                if (close < 0) break;
                Matcher m = declaration.matcher(text);
                m.region(close + 2, text.length());
                if (m.lookingAt()) {
                    String doc = text.substring(open + 3, close).lines().map(l -> l.replaceFirst("^\\s*\\* ?", ""))
                        .collect(Collectors.joining("\n")).strip();
                    byName.putIfAbsent(m.group(1), doc);
                }
            }
            docs.put(file.getFileName().toString().replaceFirst("\\.kt$", ""), byName);
        }
        return docs;
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

    // ---------------------------------------------------------------------------------------
    // The API listing: "public final class dev.stealing.X : Super" lines, each followed by its
    // members indented by two spaces ("  public final int getParallelism()").

    static Map<String, Set<String>> readApi(Path listing) throws IOException {
        Map<String, Set<String>> api = new LinkedHashMap<>();
        Set<String> current = null;
        Pattern classLine = Pattern.compile("\\b(?:class|interface|enum)\\s+([\\w.$]+)");
        for (String line : Files.readAllLines(listing)) {
            if (line.isBlank()) continue;
            if (!line.startsWith(" ")) {
                Matcher m = classLine.matcher(line);
                if (!m.find()) throw new IllegalArgumentException("not a class line: " + line);
                current = new HashSet<>();
                api.put(m.group(1), current);
            } else {
                String member = line.trim();
                int thr = member.indexOf(") throws ");
                if (thr >= 0) member = member.substring(0, thr + 1);
                int open = member.indexOf('(');
                if (open < 0) {
                    current.add(member.substring(member.lastIndexOf(' ') + 1));
                } else {
                    String head = member.substring(0, open);
                    String name = head.substring(head.lastIndexOf(' ') + 1);
                    if (name.contains(".")) name = "<init>"; // a constructor: its class's name
                    List<String> params = splitTopLevel(member.substring(open + 1, member.length() - 1));
                    current.add(key(name, params));
                }
            }
        }
        return api;
    }

    static String key(String name, List<String> paramTypes) {
        return name + "(" + paramTypes.stream().map(JavadocStubs::erase).collect(Collectors.joining(",")) + ")";
    }

    /** The type without its type arguments, nested classes joined by dots: java.util.List. */
    static String erase(String type) {
        StringBuilder sb = new StringBuilder();
        int depth = 0;
        for (char c : type.toCharArray()) {
            if (c == '<') depth++;
            else if (c == '>') depth--;
            else if (depth == 0 && !Character.isWhitespace(c)) sb.append(c == '$' ? '.' : c);
        }
        return sb.toString().replace("...", "[]");
    }

    static List<String> splitTopLevel(String s) {
        List<String> parts = new ArrayList<>();
        if (s.isBlank()) return parts;
        int depth = 0, start = 0;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '<') depth++;
            else if (c == '>') depth--;
            else if (c == ',' && depth == 0) {
                parts.add(s.substring(start, i).trim());
                start = i + 1;
            }
        }
        parts.add(s.substring(start).trim());
        return parts;
    }

    /** A type of the kotlin packages (not kotlinx): Unit, Function0, Continuation, ... */
    private static final Pattern KOTLIN_TYPE = Pattern.compile("(?<![\\w.])kotlin\\.");

    // ---------------------------------------------------------------------------------------
    // What is documented: the kept classes (by their Java names, Outer.Nested) and members.

    static final class ClassInfo {
        final String javaName; // StealingStats.Pinning
        final Set<String> methods = new LinkedHashSet<>();
        final Set<String> fields = new LinkedHashSet<>();
        ClassInfo(String javaName) { this.javaName = javaName; }
    }

    static final class Model {
        final String pkg;
        final Map<String, Set<String>> api;
        final Map<String, ClassInfo> classes = new LinkedHashMap<>(); // by Java name
        final Map<String, String> enumEntryDocs = new HashMap<>(); // "Mode.OFF" -> its KDoc
        final Map<String, Map<String, String>> propertyDocs = new HashMap<>(); // file name -> property -> KDoc

        Model(String pkg, Map<String, Set<String>> api) {
            this.pkg = pkg;
            this.api = api;
        }

        Set<String> apiOf(String binaryName) { return api.get(binaryName); }

        void scan(ClassTree ct, String pkg, String outer) {
            String javaName = outer.isEmpty() ? ct.getSimpleName().toString() : outer + "." + ct.getSimpleName();
            Set<String> members = apiOf(pkg + "." + javaName.replace('.', '$'));
            if (members == null) return;
            ClassInfo info = new ClassInfo(javaName);
            classes.put(javaName, info);
            Set<String> companions = companions(ct);
            for (Tree m : ct.getMembers()) {
                if (m instanceof ClassTree) {
                    if (!companions.contains(((ClassTree) m).getSimpleName().toString())) scan((ClassTree) m, pkg, javaName);
                } else if (m instanceof VariableTree) {
                    VariableTree v = (VariableTree) m;
                    if (keepField(v, members, companions)) info.fields.add(v.getName().toString());
                } else if (m instanceof MethodTree) {
                    MethodTree mt = (MethodTree) m;
                    if (keepMethod(mt, members)) info.methods.add(mt.getName().toString());
                }
            }
            boolean nestedKept = classes.keySet().stream().anyMatch(n -> n.startsWith(javaName + "."));
            if (!members.isEmpty() && info.methods.isEmpty() && info.fields.isEmpty() && !nestedKept) {
                classes.remove(javaName); // only Kotlin-facing members: a file facade of suspend functions
            }
        }

        boolean keepField(VariableTree v, Set<String> members, Set<String> companions) {
            String name = v.getName().toString();
            if (companions.contains(name)) return false;
            return members.contains(name) && !KOTLIN_TYPE.matcher(v.getType().toString()).find();
        }

        boolean keepMethod(MethodTree m, Set<String> members) {
            String name = m.getName().toString();
            if (name.contains("$")) return false;
            List<String> params = m.getParameters().stream().map(p -> p.getType().toString()).collect(Collectors.toList());
            String signature = (m.getReturnType() == null ? "" : m.getReturnType().toString()) + " " + String.join(",", params)
                + m.getTypeParameters();
            return members.contains(key(name, params)) && !KOTLIN_TYPE.matcher(signature).find();
        }

        /** Resolves a KDoc link target to a javadoc reference, or null. */
        String resolve(String target, ClassInfo context, Set<String> params) {
            String t = target.startsWith(pkg + ".") ? target.substring(pkg.length() + 1) : target;
            if (classes.containsKey(t)) return t;
            int dot = t.lastIndexOf('.');
            if (dot > 0) {
                ClassInfo owner = classes.get(t.substring(0, dot));
                if (owner != null) {
                    String m = member(owner, t.substring(dot + 1));
                    return m == null ? null : owner.javaName + "#" + m;
                }
                if (t.startsWith("java.") && classExists(t)) return t;
                return null;
            }
            if (params.contains(t)) return null;
            for (ClassInfo c = context; c != null; c = outerOf(c)) {
                String m = member(c, t);
                if (m != null) return (c == context ? "" : c.javaName) + "#" + m;
            }
            return null;
        }

        ClassInfo outerOf(ClassInfo c) {
            int dot = c.javaName.lastIndexOf('.');
            return dot < 0 ? null : classes.get(c.javaName.substring(0, dot));
        }

        static String member(ClassInfo c, String name) {
            if (c.methods.contains(name) || c.fields.contains(name)) return name;
            String cap = name.isEmpty() ? name : Character.toUpperCase(name.charAt(0)) + name.substring(1);
            if (c.methods.contains("get" + cap)) return "get" + cap + "()";
            if (c.methods.contains("is" + cap)) return "is" + cap + "()";
            return null;
        }
    }

    static boolean classExists(String name) {
        try {
            Class.forName(name, false, JavadocStubs.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }

    /** Nested classes that are companion objects: a static field of the same name holds each. */
    static Set<String> companions(ClassTree ct) {
        Set<String> nested = new HashSet<>();
        for (Tree m : ct.getMembers()) if (m instanceof ClassTree) nested.add(((ClassTree) m).getSimpleName().toString());
        Set<String> result = new HashSet<>();
        for (Tree m : ct.getMembers()) {
            if (!(m instanceof VariableTree)) continue;
            VariableTree v = (VariableTree) m;
            String name = v.getName().toString();
            String type = v.getType().toString();
            if (nested.contains(name) && (type.equals(name) || type.endsWith("." + name))) result.add(name);
        }
        return result;
    }

    // ---------------------------------------------------------------------------------------
    // Rewriting one stub file: edits on its text, applied from the end.

    static final class Rewriter {
        final String src;
        final SourcePositions pos;
        final CompilationUnitTree unit;
        final Model model;
        final List<int[]> ranges = new ArrayList<>();
        final List<String> texts = new ArrayList<>();

        Rewriter(String src, SourcePositions pos, CompilationUnitTree unit, Model model) {
            this.src = src;
            this.pos = pos;
            this.unit = unit;
            this.model = model;
        }

        void edit(int start, int end, String text) {
            ranges.add(new int[] {start, end});
            texts.add(text);
        }

        long start(Tree t) { return pos.getStartPosition(unit, t); }
        long end(Tree t) { return pos.getEndPosition(unit, t); }

        /** The doc comment just before t, as {start, end}, or null. */
        int[] docComment(Tree t) {
            int i = (int) start(t);
            int j = i;
            while (j > 0 && Character.isWhitespace(src.charAt(j - 1))) j--;
            if (j < 2 || !src.startsWith("*/", j - 2)) return null;
            int open = src.lastIndexOf("/**", j - 2);
            return open < 0 ? null : new int[] {open, j};
        }

        void remove(Tree t) {
            int[] doc = docComment(t);
            int from = doc != null ? doc[0] : (int) start(t);
            edit(from, (int) end(t), "");
        }

        String rewrite() {
            boolean any = false;
            for (Tree t : unit.getTypeDecls()) {
                if (!(t instanceof ClassTree)) continue;
                if (model.classes.containsKey(((ClassTree) t).getSimpleName().toString())) {
                    rewriteClass((ClassTree) t, "");
                    any = true;
                } else {
                    remove(t);
                }
            }
            if (!any) return null;
            StringBuilder sb = new StringBuilder(src);
            List<Integer> order = new ArrayList<>();
            for (int i = 0; i < ranges.size(); i++) order.add(i);
            order.sort((a, b) -> Integer.compare(ranges.get(b)[0], ranges.get(a)[0]));
            int lastStart = Integer.MAX_VALUE;
            for (int i : order) {
                int[] r = ranges.get(i);
                if (r[1] > lastStart) {
                    throw new IllegalStateException("overlapping edits in " + unit.getSourceFile().getName() + " at "
                        + r[0] + ".." + r[1] + ": " + src.substring(r[0], Math.min(r[1], r[0] + 200)));
                }
                sb.replace(r[0], r[1], texts.get(i));
                lastStart = r[0];
            }
            return cleanup(sb.toString());
        }

        /**
         * Drops kotlinx.coroutines' {@code Delay} from the implements clause: an
         * {@code @InternalCoroutinesApi} interface through which kotlinx runs {@code delay} on
         * the pool's timers, whose methods are the Kotlin-facing hooks dropped anyway.
         */
        void hideSupertypes(ClassTree ct) {
            List<? extends Tree> types = ct.getImplementsClause();
            if (types.isEmpty()) return;
            List<String> kept = types.stream().map(Tree::toString).filter(t -> !t.equals("kotlinx.coroutines.Delay"))
                .collect(Collectors.toList());
            if (kept.size() == types.size()) return;
            int first = (int) start(types.get(0));
            int last = (int) end(types.get(types.size() - 1));
            if (kept.isEmpty()) first = src.lastIndexOf("implements", first);
            edit(first, last, kept.isEmpty() ? "" : String.join(", ", kept));
        }

        void rewriteClass(ClassTree ct, String outer) {
            String javaName = outer.isEmpty() ? ct.getSimpleName().toString() : outer + "." + ct.getSimpleName();
            ClassInfo info = model.classes.get(javaName);
            Set<String> members = model.apiOf(model.pkg + "." + javaName.replace('.', '$'));
            Set<String> companions = companions(ct);

            Kdoc classDoc = Kdoc.parse(docText(ct));
            Map<String, String> propertyDocs = new HashMap<>(); // the class's @property tags: the getters
            Map<String, String> paramDocs = new HashMap<>(); // and with its @param tags: the parameters
            if (classDoc != null) {
                propertyDocs.putAll(classDoc.tagged("@property"));
                paramDocs.putAll(classDoc.tagged("@param"));
                paramDocs.putAll(propertyDocs);
            }
            replaceDoc(ct, classDoc, info, Set.of(), Map.of(), true);
            hideSupertypes(ct);
            boolean hasApiConstructor = ct.getMembers().stream()
                .anyMatch(m -> m instanceof MethodTree && ((MethodTree) m).getName().contentEquals("<init>")
                    && model.keepMethod((MethodTree) m, members));
            boolean privateConstructorKept = false;

            for (Tree m : ct.getMembers()) {
                if (m instanceof ClassTree) {
                    ClassTree nested = (ClassTree) m;
                    if (model.classes.containsKey(javaName + "." + nested.getSimpleName())) rewriteClass(nested, javaName);
                    else remove(nested);
                } else if (m instanceof VariableTree) {
                    VariableTree v = (VariableTree) m;
                    if (ct.getKind() == Tree.Kind.ENUM && v.getType().toString().equals(ct.getSimpleName().toString())) {
                        enumEntryDoc(ct, v, info); // an enum constant: its tree has no usable position
                    } else if (info.fields.contains(v.getName().toString()) && !companions.contains(v.getName().toString())) {
                        replaceDoc(v, Kdoc.parse(docText(v)), info, Set.of(), Map.of(), false);
                    } else {
                        remove(v);
                    }
                } else if (m instanceof MethodTree) {
                    MethodTree mt = (MethodTree) m;
                    String name = mt.getName().toString();
                    boolean ctor = name.equals("<init>");
                    if (model.keepMethod(mt, members)) {
                        Set<String> params = mt.getParameters().stream().map(p -> p.getName().toString())
                            .collect(Collectors.toCollection(LinkedHashSet::new));
                        Kdoc doc = Kdoc.parse(docText(mt));
                        if (doc == null) doc = getterDoc(name, propertyDocs);
                        if (doc == null) doc = getterDoc(name, model.propertyDocs.getOrDefault(javaName.split("\\.")[0], Map.of()));
                        if (doc == null && ctor && params.isEmpty()) {
                            doc = Kdoc.parse("Creates an instance with every parameter at its default value.");
                        }
                        replaceDoc(mt, doc, info, params, paramDocs, false);
                    } else if (ctor && !hasApiConstructor && !privateConstructorKept) {
                        makePrivate(mt); // without any, javadoc would show an implicit public one
                        privateConstructorKept = true;
                    } else {
                        remove(mt);
                    }
                }
            }
        }

        void enumEntryDoc(ClassTree ct, VariableTree v, ClassInfo info) {
            String doc = model.enumEntryDocs.get(ct.getSimpleName() + "." + v.getName());
            if (doc == null) return;
            String marker = "/*public static final*/ " + v.getName() + " ";
            int at = src.indexOf(marker, (int) start(ct));
            if (at < 0) throw new IllegalStateException("enum constant " + v.getName() + " not found in " + unit.getSourceFile().getName());
            String indent = indentOf(at);
            String javadoc = new Converter(model, info, Set.of()).javadoc(Kdoc.parse(doc), Map.of(), false);
            edit(at, at, comment(javadoc, indent) + indent);
        }

        Kdoc getterDoc(String method, Map<String, String> propertyDocs) {
            for (String prefix : new String[] {"get", "is"}) {
                if (method.startsWith(prefix) && method.length() > prefix.length()) {
                    String rest = method.substring(prefix.length());
                    String property = Character.toLowerCase(rest.charAt(0)) + rest.substring(1);
                    String text = propertyDocs.get(property);
                    if (text == null) text = propertyDocs.get(method); // isClosed
                    if (text != null) return Kdoc.parse(capitalized(text));
                }
            }
            return null;
        }

        static String capitalized(String s) {
            return s.isEmpty() ? s : Character.toUpperCase(s.charAt(0)) + s.substring(1);
        }

        /**
         * The constructor, made private: the implementation's, not the API's (javadoc hides it).
         * Its parameters become Objects, as their types may be internal ones that javadoc does
         * not see.
         */
        void makePrivate(MethodTree mt) {
            remove0Doc(mt);
            int s = (int) start(mt);
            int open = src.indexOf('(', s);
            String head = src.substring(s, open);
            Matcher m = Pattern.compile("\\b(public|protected|private)\\b").matcher(head);
            if (m.find()) edit(s + m.start(), s + m.end(), "private");
            else edit(s, s, "private ");
            if (!mt.getParameters().isEmpty()) {
                int close = (int) end(mt.getParameters().get(mt.getParameters().size() - 1));
                List<String> params = new ArrayList<>();
                for (int i = 0; i < mt.getParameters().size(); i++) params.add("java.lang.Object p" + i);
                edit(open + 1, close, String.join(", ", params));
            }
        }

        void remove0Doc(Tree t) {
            int[] doc = docComment(t);
            if (doc != null) edit(doc[0], doc[1], "");
        }

        String docText(Tree t) {
            int[] doc = docComment(t);
            if (doc == null) return null;
            String body = src.substring(doc[0] + 3, doc[1] - 2);
            return body.lines().map(l -> l.replaceFirst("^\\s*\\* ?", "")).collect(Collectors.joining("\n")).strip();
        }

        void replaceDoc(Tree t, Kdoc doc, ClassInfo info, Set<String> params, Map<String, String> paramFallback,
                        boolean isClass) {
            int[] old = docComment(t);
            String indent = indentOf((int) start(t));
            String javadoc = doc == null && (paramFallback.isEmpty() || params.isEmpty()) ? null
                : new Converter(model, info, params).javadoc(doc == null ? new Kdoc("", List.of()) : doc, paramFallback, isClass);
            String text = javadoc == null || javadoc.isBlank() ? "" : comment(javadoc, indent) + indent;
            if (old != null) edit(old[0], (int) start(t), text);
            else if (!text.isEmpty()) edit((int) start(t), (int) start(t), text);
        }

        String indentOf(int at) {
            int lineStart = src.lastIndexOf('\n', at - 1) + 1;
            String before = src.substring(lineStart, at);
            return before.isBlank() ? before : "";
        }

        static String comment(String body, String indent) {
            StringBuilder sb = new StringBuilder("/**\n");
            for (String line : body.split("\n", -1)) sb.append(indent).append(line.isEmpty() ? " *" : " * " + line).append('\n');
            return sb.append(indent).append(" */\n").toString();
        }

        /**
         * Kotlin's annotations (not for Java readers), type-variable bounds of Object and
         * superclasses from the engine's packages (ForkedTask's, which holds the state a fork
         * needs in one object; its members are hidden from Java, and the API class declares
         * every method of its own) go.
         */
        static String cleanup(String s) {
            s = withoutKotlinAnnotations(s);
            s = s.replaceAll(" extends dev\\.stealing\\.internal\\.[\\w.]+(?=\\s)", "");
            s = s.replace(" extends java.lang.Object>", ">").replace(" extends java.lang.Object,", ",");
            s = s.replaceAll("(?m)^[ \\t]*\\n(?:[ \\t]*\\n)+", "\n");
            return s;
        }
    }

    /** Drops the annotations of the kotlin and kotlinx packages (@kotlin.Metadata(...), ...). */
    static String withoutKotlinAnnotations(String s) {
        Matcher m = Pattern.compile("@kotlinx?\\.[\\w.]+").matcher(s);
        StringBuilder sb = new StringBuilder();
        int last = 0;
        while (m.find(last)) {
            sb.append(s, last, m.start());
            int i = m.end();
            if (i < s.length() && s.charAt(i) == '(') {
                int depth = 0;
                boolean inString = false;
                for (; i < s.length(); i++) {
                    char c = s.charAt(i);
                    if (inString) {
                        if (c == '\\') i++;
                        else if (c == '"') inString = false;
                    } else if (c == '"') {
                        inString = true;
                    } else if (c == '(') {
                        depth++;
                    } else if (c == ')' && --depth == 0) {
                        i++;
                        break;
                    }
                }
            }
            while (i < s.length() && Character.isWhitespace(s.charAt(i))) i++;
            last = i;
        }
        return sb.append(s.substring(last)).toString();
    }

    // ---------------------------------------------------------------------------------------
    // KDoc: a description and block tags (@param name text, @throws Type text, ...).

    static final class Kdoc {
        final String description;
        final List<String[]> tags; // {tag, subject or "", text}

        Kdoc(String description, List<String[]> tags) {
            this.description = description;
            this.tags = tags;
        }

        static Kdoc parse(String text) {
            if (text == null) return null;
            StringBuilder desc = new StringBuilder();
            List<String[]> tags = new ArrayList<>();
            String[] current = null;
            boolean inFence = false;
            for (String line : text.split("\n", -1)) {
                String trimmed = line.trim();
                if (trimmed.startsWith("```")) inFence = !inFence;
                if (!inFence && trimmed.startsWith("@")) {
                    String[] parts = trimmed.split("\\s+", 3);
                    String tag = parts[0];
                    boolean hasSubject = Set.of("@param", "@property", "@throws", "@exception", "@see", "@sample").contains(tag);
                    String subject = hasSubject && parts.length > 1 ? parts[1] : "";
                    String rest = hasSubject ? (parts.length > 2 ? parts[2] : "") : trimmed.substring(tag.length()).trim();
                    current = new String[] {tag, subject, rest};
                    tags.add(current);
                } else if (current != null) {
                    current[2] = current[2] + "\n" + line;
                } else {
                    desc.append(line).append('\n');
                }
            }
            return new Kdoc(desc.toString().strip(), tags);
        }

        Map<String, String> tagged(String tag) {
            Map<String, String> m = new LinkedHashMap<>();
            for (String[] t : tags) if (t[0].equals(tag)) m.put(t[1], t[2].strip());
            return m;
        }
    }

    // ---------------------------------------------------------------------------------------
    // Markdown to HTML, KDoc links to {@link}.

    static final class Converter {
        final Model model;
        final ClassInfo context;
        final Set<String> params;

        Converter(Model model, ClassInfo context, Set<String> params) {
            this.model = model;
            this.context = context;
            this.params = params;
        }

        /**
         * Whether a throws clause's [text] is about parameters of the Kotlin declaration (those
         * of its @param tags and of the class's) none of which this overload takes: the KDoc of
         * a function with default arguments is copied to each of its @JvmOverloads overloads,
         * and `StealingDispatcher()` cannot throw for a bad {@code parallelism}.
         */
        boolean namesOnlyAbsentParameters(String text, Kdoc doc, Map<String, String> paramFallback) {
            Set<String> declared = new HashSet<>(paramFallback.keySet());
            for (String[] t : doc.tags) if (t[0].equals("@param")) declared.add(t[1]);
            Set<String> named = new HashSet<>();
            Matcher m = Pattern.compile("`(\\w+)`|\\[(\\w+)]").matcher(text);
            while (m.find()) {
                String name = m.group(1) != null ? m.group(1) : m.group(2);
                if (declared.contains(name)) named.add(name);
            }
            return !named.isEmpty() && named.stream().noneMatch(params::contains);
        }

        String javadoc(Kdoc doc, Map<String, String> paramFallback, boolean isClass) {
            StringBuilder sb = new StringBuilder(blocks(doc.description));
            List<String> tagLines = new ArrayList<>();
            Set<String> documented = new HashSet<>();
            for (String[] t : doc.tags) {
                String text = t[2].strip();
                switch (t[0]) {
                    case "@param":
                        if (!isClass && params.contains(t[1])) {
                            tagLines.add("@param " + t[1] + " " + inline(text));
                            documented.add(t[1]);
                        }
                        break;
                    case "@return":
                        tagLines.add("@return " + inline(text));
                        break;
                    case "@throws":
                    case "@exception":
                        if (!isClass && namesOnlyAbsentParameters(text, doc, paramFallback)) break;
                        tagLines.add("@throws " + exceptionName(t[1]) + " " + inline(text));
                        break;
                    case "@see":
                        String ref = model.resolve(t[1], context, params);
                        if (ref != null) tagLines.add("@see " + ref);
                        break;
                    default: // @property and @param of a class (moved to the members), @sample, ...
                        break;
                }
            }
            List<String> added = new ArrayList<>();
            for (String p : params) {
                if (!documented.contains(p) && paramFallback.containsKey(p)) added.add("@param " + p + " " + inline(paramFallback.get(p)));
            }
            tagLines.addAll(0, added);
            if (!tagLines.isEmpty()) {
                if (sb.length() > 0) sb.append("\n\n");
                sb.append(String.join("\n", tagLines));
            }
            return sb.toString();
        }

        String exceptionName(String name) {
            if (name.contains(".")) return name;
            for (String pkg : new String[] {"java.lang.", "java.util.concurrent.", "java.util.", "java.io."}) {
                if (classExists(pkg + name)) return pkg + name;
            }
            return name;
        }

        /** Paragraphs, lists and fenced code. */
        String blocks(String md) {
            if (md.isBlank()) return "";
            List<String> out = new ArrayList<>();
            List<String> para = new ArrayList<>();
            List<StringBuilder> items = null;
            String[] lines = md.split("\n", -1);
            for (int i = 0; i < lines.length; i++) {
                String line = lines[i];
                String trimmed = line.trim();
                if (trimmed.startsWith("```")) {
                    flush(out, para, items);
                    para.clear();
                    items = null;
                    String lang = trimmed.substring(3).trim();
                    StringBuilder code = new StringBuilder();
                    for (i++; i < lines.length && !lines[i].trim().startsWith("```"); i++) code.append(lines[i]).append('\n');
                    String label = lang.equalsIgnoreCase("kotlin") ? "Kotlin" : lang.equalsIgnoreCase("java") ? "Java" : null;
                    String pre = "<pre>" + escapeCode(code.toString().stripTrailing()) + "</pre>";
                    out.add(label == null ? pre : "<p><em>" + label + ":</em>\n" + pre);
                    continue;
                }
                if (trimmed.startsWith("|")) {
                    flush(out, para, items);
                    para.clear();
                    items = null;
                    List<String> rows = new ArrayList<>();
                    for (; i < lines.length && lines[i].trim().startsWith("|"); i++) rows.add(lines[i].trim());
                    i--;
                    out.add(table(rows));
                    continue;
                }
                if (trimmed.isEmpty()) {
                    flush(out, para, items);
                    para.clear();
                    items = null;
                    continue;
                }
                boolean item = trimmed.startsWith("- ") || trimmed.startsWith("* ");
                if (item) {
                    if (items == null) {
                        flush(out, para, null);
                        para.clear();
                        items = new ArrayList<>();
                    }
                    items.add(new StringBuilder(trimmed.substring(2)));
                } else if (items != null && Character.isWhitespace(line.charAt(0))) {
                    items.get(items.size() - 1).append('\n').append(trimmed);
                } else {
                    if (items != null) {
                        flush(out, para, items);
                        items = null;
                    }
                    para.add(trimmed);
                }
            }
            flush(out, para, items);
            StringBuilder sb = new StringBuilder();
            for (int k = 0; k < out.size(); k++) {
                String block = out.get(k);
                boolean ownBlock = block.startsWith("<ul>") || block.startsWith("<pre>") || block.startsWith("<p>")
                    || block.startsWith("<table");
                if (k > 0) sb.append("\n\n").append(ownBlock ? "" : "<p>");
                sb.append(block);
            }
            return sb.toString();
        }

        /** A Markdown table: a header row, a |---| row, the body rows. */
        String table(List<String> rows) {
            List<List<String>> cells = new ArrayList<>();
            for (String row : rows) {
                String r = row.substring(1, row.endsWith("|") ? row.length() - 1 : row.length());
                List<String> cs = new ArrayList<>();
                for (String c : r.split("\\|", -1)) cs.add(c.trim());
                if (cs.stream().allMatch(c -> c.matches(":?-+:?"))) continue; // the separator row
                cells.add(cs);
            }
            StringBuilder sb = new StringBuilder("<table class=\"striped\">\n<caption style=\"display:none\">")
                .append(escapeText(String.join(", ", cells.get(0)))).append("</caption>\n<thead>\n<tr>");
            for (String h : cells.get(0)) sb.append("<th scope=\"col\">").append(inline(h)).append("</th>");
            sb.append("</tr>\n</thead>\n<tbody>");
            for (List<String> row : cells.subList(1, cells.size())) {
                sb.append("\n<tr>");
                for (String c : row) sb.append("<td>").append(inline(c)).append("</td>");
                sb.append("</tr>");
            }
            return sb.append("\n</tbody>\n</table>").toString();
        }

        void flush(List<String> out, List<String> para, List<StringBuilder> items) {
            if (items != null) {
                StringBuilder ul = new StringBuilder("<ul>");
                for (StringBuilder it : items) ul.append("\n<li>").append(inline(it.toString())).append("</li>");
                out.add(ul.append("\n</ul>").toString());
            } else if (!para.isEmpty()) {
                out.add(inline(String.join("\n", para)));
            }
        }

        static final Pattern LINK = Pattern.compile("\\[([^\\[\\]]+)\\](?:\\[([^\\[\\]]+)\\]|\\(([^()\\s]+)\\))?");

        /** `code`, [links], *emphasis* and **strong** in running text. */
        String inline(String text) {
            StringBuilder sb = new StringBuilder();
            int i = 0;
            while (i < text.length()) {
                int tick = text.indexOf('`', i);
                if (tick < 0) {
                    sb.append(plain(text.substring(i)));
                    break;
                }
                int close = text.indexOf('`', tick + 1);
                if (close < 0) {
                    sb.append(plain(text.substring(i)));
                    break;
                }
                sb.append(plain(text.substring(i, tick)));
                sb.append("<code>").append(escapeCode(text.substring(tick + 1, close))).append("</code>");
                i = close + 1;
            }
            return sb.toString();
        }

        String plain(String text) {
            Matcher m = LINK.matcher(text);
            StringBuilder sb = new StringBuilder();
            int last = 0;
            while (m.find()) {
                sb.append(emphasis(escapeText(text.substring(last, m.start()))));
                String label = m.group(1);
                if (m.group(3) != null) {
                    sb.append("<a href=\"").append(escapeText(m.group(3))).append("\">").append(escapeText(label)).append("</a>");
                } else {
                    String target = m.group(2) != null ? m.group(2) : label;
                    String ref = model.resolve(target, context, params);
                    if (ref == null) sb.append("<code>").append(escapeCode(label)).append("</code>");
                    else if (m.group(2) != null) sb.append("{@link ").append(ref).append(" ").append(escapeText(label)).append("}");
                    else sb.append("{@link ").append(ref).append(defaultLabel(ref)).append("}");
                }
                last = m.end();
            }
            sb.append(emphasis(escapeText(text.substring(last))));
            return sb.toString();
        }

        /**
         * " name()" for a getter or another method linked with its empty parameter list, " name"
         * for a method linked by name (javadoc's own label lists the parameter types; "name()"
         * would name an overload without parameters, which may not exist), else "".
         */
        String defaultLabel(String ref) {
            int hash = ref.indexOf('#');
            if (hash < 0) return "";
            String owner = ref.substring(0, hash);
            String member = ref.substring(hash + 1);
            ClassInfo c = model.classes.get(owner.isEmpty() ? context.javaName : owner);
            String name = member.endsWith("()") ? member.substring(0, member.length() - 2) : member;
            if (c == null || !c.methods.contains(name)) return "";
            return " " + (owner.isEmpty() ? "" : owner + ".") + name + (member.endsWith("()") ? "()" : "");
        }

        static String emphasis(String s) {
            s = s.replaceAll("\\*\\*(\\S(?:.*?\\S)?)\\*\\*", "<b>$1</b>");
            return s.replaceAll("(?<![\\w*])\\*(\\S(?:[^*]*?\\S)?)\\*(?![\\w*])", "<em>$1</em>");
        }

        static String escapeText(String s) {
            return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("@", "&#64;");
        }

        static String escapeCode(String s) {
            return escapeText(s).replace("{", "&#123;").replace("}", "&#125;").replace("*/", "*&#47;");
        }
    }
}
