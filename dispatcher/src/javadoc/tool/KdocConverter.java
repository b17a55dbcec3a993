import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Markdown to HTML, KDoc links to {@link}: a KDoc comment as javadoc. */
final class KdocConverter {
    final ApiModel model;
    final ClassInfo context;
    final Set<String> params;

    KdocConverter(ApiModel model, ClassInfo context, Set<String> params) {
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
            if (ApiModel.classExists(pkg + name)) return pkg + name;
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
