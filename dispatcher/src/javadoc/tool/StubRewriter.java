import com.sun.source.tree.ClassTree;
import com.sun.source.tree.CompilationUnitTree;
import com.sun.source.tree.MethodTree;
import com.sun.source.tree.Tree;
import com.sun.source.tree.VariableTree;
import com.sun.source.util.SourcePositions;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/** Rewrites one stub file: edits on its text, applied from the end. */
final class StubRewriter {
    final String src;
    final SourcePositions pos;
    final CompilationUnitTree unit;
    final ApiModel model;
    final List<int[]> ranges = new ArrayList<>();
    final List<String> texts = new ArrayList<>();

    StubRewriter(String src, SourcePositions pos, CompilationUnitTree unit, ApiModel model) {
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
        Set<String> companions = ApiModel.companions(ct);

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
        String javadoc = new KdocConverter(model, info, Set.of()).javadoc(Kdoc.parse(doc), Map.of(), false);
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
            : new KdocConverter(model, info, params).javadoc(doc == null ? new Kdoc("", List.of()) : doc, paramFallback, isClass);
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
}
