package com.example.payments.testing;

import java.io.IOException;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;

/**
 * The jar this build makes, and its test-tools jar, by the names the pom gives them: read from {@code target/jar.properties}, which the build
 * writes from {@code src/build/jar.properties} (filtered). The pom is the only place the name lives, so a renamed
 * artifact cannot leave a test running a jar that no longer exists.
 */
public final class BuiltJar {

    private BuiltJar() {
    }

    /**
     * The jar of the project in the current directory.
     *
     * @return {@code target/<finalName>.jar}
     * @throws IllegalStateException when the project was not built, or the jar is missing
     */
    public static Path path() {
        return path(Path.of(""));
    }

    /**
     * The jar of a project.
     *
     * @param projectRoot directory holding the pom
     * @return {@code <projectRoot>/target/<finalName>.jar}
     * @throws IllegalStateException when the project was not built, or the jar is missing
     */
    public static Path path(Path projectRoot) {
        return named(projectRoot, "jar");
    }

    /**
     * The test-tools jar of the project in the current directory: test code that runs as a process of its own beside
     * the service's jar (the issuer simulator, the load tests' naive-shutdown contender), on the class path
     * {@link #path()}{@code :}{@link #testTools()}.
     *
     * @return {@code target/<finalName>-test-tools.jar}
     * @throws IllegalStateException when the project was not built, or the jar is missing
     */
    public static Path testTools() {
        return named(Path.of(""), "test_tools");
    }

    /**
     * The class path of a test-tools main class: the service's jar (its manifest Class-Path brings
     * {@code target/libs}) and the test-tools jar.
     *
     * @return {@code target/<finalName>.jar:target/<finalName>-test-tools.jar}
     * @throws IllegalStateException when the project was not built, or a jar is missing
     */
    public static String testToolsClassPath() {
        return path() + java.io.File.pathSeparator + testTools();
    }

    private static Path named(Path projectRoot, String key) {
        Path target = projectRoot.resolve("target");
        Path properties = target.resolve("jar.properties");
        if (!Files.isRegularFile(properties)) {
            throw new IllegalStateException("Build the jar first (./mvnw package): no " + properties.toAbsolutePath());
        }
        Properties jar = new Properties();
        try (Reader reader = Files.newBufferedReader(properties, StandardCharsets.UTF_8)) {
            jar.load(reader);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        String name = jar.getProperty(key);
        if (name == null) {
            throw new IllegalStateException("Build the jar first (./mvnw package): no " + key + " in "
                                            + properties.toAbsolutePath());
        }
        Path path = target.resolve(name);
        if (!Files.isRegularFile(path)) {
            throw new IllegalStateException("Build the jar first (./mvnw package): " + path.toAbsolutePath());
        }
        return path;
    }
}
