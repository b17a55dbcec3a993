package dev.stealing.pekko;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.File;
import java.io.IOException;
import java.util.List;
import java.util.stream.Collectors;
import java.util.zip.ZipFile;
import org.junit.jupiter.api.Test;

/**
 * The module's javadoc jar as a Java user reads it: one class page, the configurator's, with its
 * constructor, Pekko's factory method and the static {@code dispatcherOf}, and nothing of the
 * implementation. The jar is built in the package phase, after the tests, so this runs in a
 * Surefire execution of its own in the verify phase ({@code javadoc-jar} in pekko/pom.xml),
 * which passes the jar's path as {@code javadoc.jar}; without it this is skipped.
 */
class JavadocJarTest {
    @Test
    void theJarDocumentsTheConfiguratorAndNothingInternal() throws IOException {
        String path = System.getProperty("javadoc.jar", "");
        assumeTrue(!path.isBlank(), "run by the javadoc-jar execution in the verify phase");
        try (ZipFile zip = new ZipFile(new File(path))) {
            List<String> classPages = zip.stream().map(e -> e.getName())
                .filter(n -> n.startsWith("dev/stealing/pekko/") && n.endsWith(".html") && n.chars().filter(c -> c == '/').count() == 3)
                .filter(n -> !n.contains("/package-") && !n.contains("/class-use/"))
                .sorted().collect(Collectors.toList());
            assertEquals(List.of("dev/stealing/pekko/StealingExecutorServiceConfigurator.html"), classPages);
            String page = new String(zip.getInputStream(zip.getEntry(classPages.get(0))).readAllBytes());
            for (String member : List.of("dispatcherOf", "createExecutorServiceFactory", "parallelism-min", "affinity")) {
                assertTrue(page.contains(member), "the configurator's page mentions " + member);
            }
            assertTrue(page.contains("static"), "dispatcherOf is shown as a static method");
            assertTrue(!page.contains("Companion"), "no companion object on a Java page");
        }
    }
}
