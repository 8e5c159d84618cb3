package com.example.payments.testing;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

/**
 * External tools a test needs (e.g. {@code redis-server}). Outside CI a test without its tool is skipped with a message
 * naming the tool and how to get it; with {@code CI=true} it fails, so CI cannot pass by skipping.
 */
public final class Tools {

    private Tools() {
    }

    /**
     * Whether an executable is on the PATH.
     *
     * @param tool file name, e.g. {@code redis-server}
     * @return {@code true} when found
     */
    public static boolean onPath(String tool) {
        for (String directory : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            if (!directory.isEmpty() && Files.isExecutable(Path.of(directory, tool))) {
                return true;
            }
        }
        return false;
    }

    /**
     * Skips the calling test when the tool is missing, or fails it under {@code CI=true}. Call it per test (e.g. in
     * {@code @BeforeEach}): Surefire reports a class aborted in {@code @BeforeAll} as 0 tests, without the message.
     *
     * @param tool        file name
     * @param installHint how to get it, e.g. {@code apt-get install redis-server}
     */
    public static void require(String tool, String installHint) {
        if (onPath(tool)) {
            return;
        }
        String message = tool + " is not on the PATH; install it with `" + installHint + "`";
        if ("true".equalsIgnoreCase(System.getenv("CI"))) {
            Assertions.fail(message + " (CI=true: required)");
        }
        Assumptions.abort(message);
    }
}
