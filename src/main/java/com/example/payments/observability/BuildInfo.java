package com.example.payments.observability;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Properties;

/**
 * The version and revision of the running build, read from {@code build-info.properties} on the class path, which
 * the build writes from the pom's version and the git commit it was built from (git-commit-id-maven-plugin). A build
 * outside a git checkout (the container image's build stage has no {@code .git}) has the revision
 * {@value #UNKNOWN}; so has a value the build left unfiltered.
 *
 * @param version  the pom's version, e.g. {@code 1.0.0-SNAPSHOT}
 * @param revision the abbreviated git commit, e.g. {@code 38e1555}, or {@value #UNKNOWN}
 */
public record BuildInfo(String version, String revision) {

    /** The value of a field the build could not fill. */
    public static final String UNKNOWN = "unknown";

    static final String RESOURCE = "/build-info.properties";

    /**
     * Reads this build's information.
     *
     * @return the version and revision, each {@value #UNKNOWN} when missing
     */
    public static BuildInfo load() {
        Properties properties = new Properties();
        try (InputStream in = BuildInfo.class.getResourceAsStream(RESOURCE)) {
            if (in != null) {
                properties.load(in);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot read " + RESOURCE, e);
        }
        return of(properties.getProperty("version"), properties.getProperty("revision"));
    }

    /**
     * The build information from raw values, each replaced by {@value #UNKNOWN} when blank or left unfiltered
     * ({@code ${...}}).
     *
     * @param version  raw version
     * @param revision raw revision
     * @return the build information
     */
    public static BuildInfo of(String version, String revision) {
        return new BuildInfo(orUnknown(version), orUnknown(revision));
    }

    private static String orUnknown(String value) {
        return value == null || value.isBlank() || value.contains("${") ? UNKNOWN : value.strip();
    }
}
