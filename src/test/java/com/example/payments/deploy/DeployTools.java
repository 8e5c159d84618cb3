package com.example.payments.deploy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Assumptions;

import static org.junit.jupiter.api.Assertions.fail;

/**
 * Finds the external tools of the deployment tests and runs them.
 *
 * <p>Each tool is looked up in this order: its environment variable (e.g. {@code KUBECTL=/path/to/kubectl}), then
 * {@code .tools/bin/} of the project (where {@code scripts/install-deploy-tools.sh} puts it), then {@code PATH}.
 * A missing tool skips the test outside CI and fails it when the {@code CI} environment variable is set.
 */
final class DeployTools {

    /** The external tools, with the environment variable that overrides each one's path. */
    enum Tool {
        /** kubectl >= 1.30 with its built-in kustomize. */
        KUBECTL("kubectl", "KUBECTL"),
        /** promtool (Debian package prometheus). */
        PROMTOOL("promtool", "PROMTOOL"),
        /** dockerfilelint (npm). */
        DOCKERFILELINT("dockerfilelint", "DOCKERFILELINT"),
        /** dockerfile-utils (npm). */
        DOCKERFILE_UTILS("dockerfile-utils", "DOCKERFILE_UTILS"),
        /** action-validator (npm @action-validator/cli): GitHub Actions workflows against their schema. */
        ACTION_VALIDATOR("action-validator", "ACTION_VALIDATOR");

        private final String executable;
        private final String envVar;

        Tool(String executable, String envVar) {
            this.executable = executable;
            this.envVar = envVar;
        }
    }

    /**
     * What a finished command printed.
     *
     * @param exitCode exit status
     * @param stdout   standard output
     * @param stderr   standard error
     */
    record Result(int exitCode, String stdout, String stderr) {
    }

    // A bound against a hung tool, not a timing goal: `promtool test rules` evaluates hours of 5 s steps and took over
    // 60 s on a 2-core machine at a load average of 30.
    private static final long TIMEOUT_SECONDS = 300;

    private DeployTools() {
    }

    /**
     * The project's root directory (where {@code pom.xml}, {@code k8s/} and {@code config/} are); surefire runs tests
     * there.
     *
     * @return absolute path
     */
    static Path projectRoot() {
        Path dir = Path.of("").toAbsolutePath();
        if (!Files.isDirectory(dir.resolve("k8s")) || !Files.isRegularFile(dir.resolve("pom.xml"))) {
            fail("Run the deployment tests from the project root (found no k8s/ and pom.xml in " + dir + ")");
        }
        return dir;
    }

    /**
     * The tool's executable, or a skipped test (outside CI) or a failed one (CI) when it is missing.
     *
     * @param tool the tool
     * @return path of the executable
     */
    static Path require(Tool tool) {
        Optional<Path> found = locate(tool);
        if (found.isPresent()) {
            return found.get();
        }
        String message = tool.executable + " not found: run scripts/install-deploy-tools.sh (installs it into .tools/bin) "
                         + "or set " + tool.envVar + " to its path";
        if (isCi()) {
            fail(message + " (CI is set, so a missing tool fails instead of skipping)");
        }
        Assumptions.abort(message);
        throw new AssertionError("unreachable");
    }

    /**
     * Runs a tool to completion (at most 300 s).
     *
     * @param workingDir directory to run in
     * @param command    executable and arguments
     * @return what it printed and its exit status
     */
    static Result run(Path workingDir, List<String> command) {
        try {
            Path out = Files.createTempFile("deploy-tool", ".out");
            Path err = Files.createTempFile("deploy-tool", ".err");
            try {
                Process process = new ProcessBuilder(command).directory(workingDir.toFile())
                        .redirectOutput(out.toFile()).redirectError(err.toFile()).start();
                if (!process.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                    fail(String.join(" ", command) + " did not finish within " + TIMEOUT_SECONDS + " s");
                }
                return new Result(process.exitValue(), Files.readString(out, StandardCharsets.UTF_8),
                                  Files.readString(err, StandardCharsets.UTF_8));
            } finally {
                Files.deleteIfExists(out);
                Files.deleteIfExists(err);
            }
        } catch (IOException e) {
            throw new AssertionError("Could not run " + command, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("Interrupted running " + command, e);
        }
    }

    private static Optional<Path> locate(Tool tool) {
        String override = System.getenv(tool.envVar);
        if (override != null && !override.isBlank()) {
            Path path = Path.of(override);
            if (!Files.isExecutable(path)) {
                fail(tool.envVar + "=" + override + " is not an executable file");
            }
            return Optional.of(path);
        }
        List<Path> candidates = new ArrayList<>();
        candidates.add(projectRoot().resolve(".tools/bin").resolve(tool.executable));
        for (String dir : System.getenv().getOrDefault("PATH", "").split(java.io.File.pathSeparator)) {
            if (!dir.isBlank()) {
                candidates.add(Path.of(dir, tool.executable));
            }
        }
        return candidates.stream().filter(Files::isExecutable).findFirst();
    }

    private static boolean isCi() {
        String ci = System.getenv("CI");
        return ci != null && !ci.isBlank() && !"false".equalsIgnoreCase(ci) && !"0".equals(ci);
    }
}
