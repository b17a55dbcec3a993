package dev.stealing.samples;

import dev.stealing.StealingDispatcher;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * Word counts over the text files of a directory tree (the current directory by default, or the
 * one given as the first argument), the Java loops on one pool: {@code parallelMap} reads the
 * files, {@code parallelCollect} counts the words into one map per piece and merges them,
 * {@code parallelSort} ranks the words with a comparator, {@code parallelReduceToLong} totals
 * them. It checks every figure against a sequential count and prints the top ten with the time of
 * each way.
 *
 * <p>Run: {@code mvn -q -pl samples -am compile exec:java -Dexec.mainClass=dev.stealing.samples.JavaWordCount [-Dexec.args=DIR]}
 */
public final class JavaWordCount {
    private JavaWordCount() {
    }

    /** A word and how often it occurs. */
    record WordCount(String word, long count) { }

    public static void main(String[] args) throws IOException {
        Path root = Path.of(args.length > 0 && !args[0].startsWith("--") ? args[0] : ".");
        List<Path> files;
        try (Stream<Path> walk = Files.walk(root)) {
            files = walk.filter(Files::isRegularFile).filter(JavaWordCount::isText).filter(p -> !isBuildOutput(root.relativize(p)))
                .sorted().toList();
        }
        try (StealingDispatcher pool = new StealingDispatcher(Runtime.getRuntime().availableProcessors(), "words")) {
            for (int round = 0; round < 3; round++) { // the first rounds warm up the JIT
                long t0 = System.nanoTime();
                List<String> texts = pool.parallelMap(files, JavaWordCount::read); // in the files' order
                Map<String, Long> counts = pool.parallelCollect(0, texts.size(), HashMap::new,
                    (map, i) -> countWords(texts.get(i), map),
                    (into, from) -> from.forEach((w, n) -> into.merge(w, n, Long::sum)));
                WordCount[] ranked = counts.entrySet().stream()
                    .map(e -> new WordCount(e.getKey(), e.getValue())).toArray(WordCount[]::new);
                pool.parallelSort(ranked, Comparator.comparingLong(WordCount::count).reversed()
                    .thenComparing(WordCount::word));
                long total = pool.parallelReduceToLong(0, ranked.length, 0L, i -> ranked[i].count(), Long::sum);
                long parallelNanos = System.nanoTime() - t0;

                long t1 = System.nanoTime();
                Map<String, Long> expected = new HashMap<>();
                for (Path f : files) countWords(read(f), expected);
                long sequentialNanos = System.nanoTime() - t1;

                if (!counts.equals(expected)) throw new AssertionError("parallel counts differ from the sequential ones");
                long expectedTotal = expected.values().stream().mapToLong(Long::longValue).sum();
                if (total != expectedTotal) throw new AssertionError("total " + total + " != " + expectedTotal);
                for (int i = 1; i < ranked.length; i++) {
                    if (ranked[i - 1].count() < ranked[i].count()) throw new AssertionError("not ranked at " + i);
                }
                if (round == 2) {
                    System.out.printf("%d files, %d words, %d distinct: %.1f ms on the pool, %.1f ms sequentially%n",
                        files.size(), total, ranked.length, parallelNanos / 1e6, sequentialNanos / 1e6);
                    for (int i = 0; i < Math.min(10, ranked.length); i++) {
                        System.out.printf("%8d  %s%n", ranked[i].count(), ranked[i].word());
                    }
                }
            }
        }
    }

    /** Whether {@code relative} lies in a build's output or a repository's metadata ({@code target}, {@code .git}). */
    private static boolean isBuildOutput(Path relative) {
        for (Path part : relative) {
            String n = part.toString();
            if (n.equals("target") || n.equals(".git")) return true;
        }
        return false;
    }

    private static boolean isText(Path p) {
        String n = p.getFileName().toString();
        return n.endsWith(".md") || n.endsWith(".kt") || n.endsWith(".java") || n.endsWith(".xml") || n.endsWith(".txt");
    }

    private static String read(Path file) {
        try {
            return Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Adds the words of {@code text} (runs of letters, lower-cased) to {@code into}. */
    private static void countWords(String text, Map<String, Long> into) {
        int i = 0;
        int n = text.length();
        while (i < n) {
            while (i < n && !Character.isLetter(text.charAt(i))) i++;
            int start = i;
            while (i < n && Character.isLetter(text.charAt(i))) i++;
            if (i > start) into.merge(text.substring(start, i).toLowerCase(java.util.Locale.ROOT), 1L, Long::sum);
        }
    }
}
