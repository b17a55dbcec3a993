import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * The API listing (api/*.api, kept true by the API specs): "public final class dev.stealing.X : Super"
 * lines, each followed by its members indented by two spaces ("  public final int getParallelism()").
 */
final class ApiListing {

    private ApiListing() { }

    static Map<String, Set<String>> read(Path listing) throws IOException {
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
        return name + "(" + paramTypes.stream().map(ApiListing::erase).collect(Collectors.joining(",")) + ")";
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
}
