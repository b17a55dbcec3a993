import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** KDoc: a description and block tags (@param name text, @throws Type text, ...). */
final class Kdoc {
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
