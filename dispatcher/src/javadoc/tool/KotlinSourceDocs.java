import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The KDoc that kapt's stubs leave out, read from the Kotlin sources of the API package.
 */
final class KotlinSourceDocs {

    private KotlinSourceDocs() { }

    /**
     * The KDoc of enum entries, by "Enum.ENTRY" (kapt's stubs leave it out): the entries at the
     * start of each "enum class Name {" body of the package's Kotlin sources.
     */
    static Map<String, String> enumEntries(Path sources) throws IOException {
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
    static Map<String, Map<String, String>> properties(Path sources) throws IOException {
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
}
