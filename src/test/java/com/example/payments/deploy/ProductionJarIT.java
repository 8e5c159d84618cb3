package com.example.payments.deploy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.jar.Attributes;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.stream.Stream;

import com.example.payments.testing.BuiltJar;

import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.empty;
import static org.hamcrest.Matchers.hasItems;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.nullValue;

/**
 * The service's jar ({@code target/payments-authorization.jar}, what the image ships) holds production code only: no
 * class that {@code src/test} compiles (into {@code target/test-classes}), and in particular none of the test code that
 * runs as a process of its own (the issuer simulator's HTTP server, the load tests' naive-shutdown contender), which
 * the test-tools jar ({@link BuiltJar#testTools()}) holds instead, with nothing else.
 */
class ProductionJarIT {

    /** The test code run beside the service: what the test-tools jar is for. */
    private static final List<String> TEST_TOOLS = List.of("com/example/payments/issuer/IssuerSimulator.class",
                                                           "com/example/payments/issuer/IssuerSimulatorService.class",
                                                           "com/example/payments/NaiveShutdownMain.class");

    @Test
    void theServiceJarHoldsNoTestClassNoSimulatorServerAndNoNaiveShutdown() throws IOException {
        Set<String> jar = classes(BuiltJar.path());
        Set<String> testClasses = testClasses();

        Set<String> fromTests = new TreeSet<>(jar);
        fromTests.retainAll(testClasses);
        assertThat("classes of src/test in the service's jar", fromTests, is(empty()));
        assertThat("test-only code by name in the service's jar (a copy under src/main would not be in "
                   + "target/test-classes)", jar.stream().filter(entry -> entry.matches(
                           ".*/(IssuerSimulator[^/]*|NaiveShutdown[^/]*|[^/]*(Test|IT|Tests)(\\$[^/]*)?\\.class)$")
                           || entry.startsWith("com/example/payments/testing/")).toList(), is(empty()));
        assertThat("the test-tools code exists, so the check above checks something", testClasses,
                   hasItems(TEST_TOOLS.toArray(String[]::new)));
        assertThat("production code the development setup runs on is still there", jar,
                   hasItems("com/example/payments/Main.class",
                            "com/example/payments/authorization/RuleBasedAuthorizer.class",
                            "com/example/payments/issuer/SimulatedIssuer.class",
                            "com/example/payments/issuer/IssuerRules.class"));
    }

    @Test
    void theTestToolsJarHoldsTheSimulatorAndTheNaiveContenderOnly() throws IOException {
        Set<String> tools = classes(BuiltJar.testTools());

        assertThat(tools, hasItems(TEST_TOOLS.toArray(String[]::new)));
        assertThat("only the test-tools classes and their nested classes", tools.stream()
                .filter(entry -> TEST_TOOLS.stream().noneMatch(tool -> entry.equals(tool)
                        || entry.startsWith(tool.replace(".class", "$")))).toList(), is(empty()));
        try (JarFile file = new JarFile(BuiltJar.testTools().toFile())) {
            Attributes manifest = file.getManifest().getMainAttributes();
            assertThat("no main class of its own: the command names one", manifest.getValue("Main-Class"),
                       is(nullValue()));
        }
    }

    private static Set<String> classes(Path jar) throws IOException {
        try (JarFile file = new JarFile(jar.toFile())) {
            return file.stream().map(JarEntry::getName).filter(name -> name.endsWith(".class"))
                    .collect(TreeSet::new, Set::add, Set::addAll);
        }
    }

    private static Set<String> testClasses() throws IOException {
        Path root = Path.of("target", "test-classes");
        try (Stream<Path> files = Files.walk(root)) {
            return files.filter(path -> path.toString().endsWith(".class"))
                    .map(path -> root.relativize(path).toString().replace('\\', '/'))
                    .collect(TreeSet::new, Set::add, Set::addAll);
        }
    }
}
