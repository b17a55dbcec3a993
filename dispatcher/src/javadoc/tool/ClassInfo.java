import java.util.LinkedHashSet;
import java.util.Set;

/** A documented class (by its Java name, Outer.Nested) and its documented members. */
final class ClassInfo {
    final String javaName; // StealingStats.Pinning
    final Set<String> methods = new LinkedHashSet<>();
    final Set<String> fields = new LinkedHashSet<>();
    ClassInfo(String javaName) { this.javaName = javaName; }
}
