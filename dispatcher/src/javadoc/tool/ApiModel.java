import com.sun.source.tree.ClassTree;
import com.sun.source.tree.MethodTree;
import com.sun.source.tree.Tree;
import com.sun.source.tree.VariableTree;

import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/** What is documented: the kept classes (by their Java names, Outer.Nested) and members. */
final class ApiModel {
    final String pkg;
    final Map<String, Set<String>> api;
    final Map<String, ClassInfo> classes = new LinkedHashMap<>(); // by Java name
    final Map<String, String> enumEntryDocs = new HashMap<>(); // "Mode.OFF" -> its KDoc
    final Map<String, Map<String, String>> propertyDocs = new HashMap<>(); // file name -> property -> KDoc

    ApiModel(String pkg, Map<String, Set<String>> api) {
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
        return members.contains(ApiListing.key(name, params)) && !KOTLIN_TYPE.matcher(signature).find();
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

    /** A type of the kotlin packages (not kotlinx): Unit, Function0, Continuation, ... */
    private static final Pattern KOTLIN_TYPE = Pattern.compile("(?<![\\w.])kotlin\\.");

    static boolean classExists(String name) {
        try {
            Class.forName(name, false, ApiModel.class.getClassLoader());
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
}
