package com.example.payments.testing;

import java.io.IOException;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;

/**
 * The jar this build makes, by the name the pom gives it: read from {@code target/jar.properties}, which the build
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
        Path path = target.resolve(jar.getProperty("jar"));
        if (!Files.isRegularFile(path)) {
            throw new IllegalStateException("Build the jar first (./mvnw package): " + path.toAbsolutePath());
        }
        return path;
    }
}
