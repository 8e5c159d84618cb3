package com.example.payments.testing;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

import org.junit.jupiter.api.Assumptions;

/**
 * Finds external tools that some tests need. Outside CI ({@code CI} unset) a missing tool skips the test with a
 * message naming the tool and how to get it; under {@code CI=true} it fails the test.
 */
public final class Tools {

    private Tools() {
    }

    /**
     * Finds an executable on the PATH.
     *
     * @param name executable name
     * @return its path
     */
    public static Optional<Path> find(String name) {
        String path = System.getenv("PATH");
        if (path == null) {
            return Optional.empty();
        }
        for (String dir : path.split(java.io.File.pathSeparator)) {
            Path candidate = Path.of(dir, name);
            if (Files.isExecutable(candidate)) {
                return Optional.of(candidate);
            }
        }
        return Optional.empty();
    }

    /**
     * Whether an executable is on the PATH.
     *
     * @param name executable name
     * @return {@code true} when found
     */
    public static boolean onPath(String name) {
        return find(name).isPresent();
    }

    /**
     * Requires a tool: returns its path, or skips (outside CI) / fails (under CI) the current test.
     *
     * @param name    executable name
     * @param install how to get it, e.g. {@code apt-get install -y redis-server}
     * @return its path
     */
    public static Path require(String name, String install) {
        Optional<Path> tool = find(name);
        if (tool.isPresent()) {
            return tool.get();
        }
        unmet(name + " is not installed; install it with: " + install + " (or run .ci/run)");
        return null;
    }

    /**
     * Reports a requirement of the current test that this machine does not meet: skips the test outside CI, fails it
     * under CI.
     *
     * @param message what is missing and how to get it
     */
    public static void unmet(String message) {
        if ("true".equalsIgnoreCase(System.getenv("CI"))) {
            throw new AssertionError(message);
        }
        Assumptions.abort(message);
    }
}
