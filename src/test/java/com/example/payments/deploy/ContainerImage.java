package com.example.payments.deploy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import com.example.payments.http.Json;
import com.example.payments.testing.ServiceProcess;
import com.example.payments.testing.Tools;
import com.fasterxml.jackson.databind.JsonNode;

/**
 * The container image built from the project's {@code Dockerfile} by {@code scripts/build-image.sh} (buildah; local
 * stand-in bases, since the public registry is unreachable here), read with buildah, and run by
 * {@code scripts/run-image.sh} the way the pod runs it: PID 1 of its own PID namespace, the image's user, a read-only
 * root with only {@code /tmp} writable. Needs root, buildah, mmdebstrap and unshare: without them the test is skipped
 * naming the install, or fails under {@code CI=true}.
 */
final class ContainerImage implements AutoCloseable {

    private static final Duration BUILD_TIMEOUT = Duration.ofMinutes(20);
    private static final Duration COMMAND_TIMEOUT = Duration.ofMinutes(2);
    private static final String INSTALL = "apt-get install -y buildah mmdebstrap";

    private final String name;
    private final JsonNode inspection;

    private ContainerImage(String name, JsonNode inspection) {
        this.name = name;
        this.inspection = inspection;
    }

    /**
     * Builds the image under a name of its own, so that builds of parallel test runs do not meet.
     *
     * @param log where the build's output goes (its tail is in the failure message)
     * @return the built image
     * @throws AssertionError when the build fails
     */
    static ContainerImage build(Path log) {
        Tools.require("buildah", INSTALL);
        Tools.require("mmdebstrap", INSTALL);
        Tools.require("unshare", "apt-get install -y util-linux");
        if (!isRoot()) {
            Tools.unmet("building and running the image needs root (buildah's storage, mount and PID namespaces)");
        }
        String name = prebuilt(log).orElseGet(() -> {
            String own = "localhost/payments-authorization:it-" + ProcessHandle.current().pid();
            exec(List.of("bash", "scripts/build-image.sh", own), BUILD_TIMEOUT, log);
            return own;
        });
        String inspection = exec(List.of("buildah", "inspect", "--type", "image", name), COMMAND_TIMEOUT, null);
        try {
            return new ContainerImage(name, Json.mapper().readTree(inspection));
        } catch (IOException e) {
            throw new AssertionError("buildah inspect printed no JSON: " + inspection, e);
        }
    }

    /**
     * The image that {@code scripts/prebuild-test-image.sh} builds in the background during {@code ./mvnw verify}
     * (started at pre-integration-test), once it is built: waits for the build's end while the script runs.
     *
     * @param log where this test keeps the build's output (the prebuild writes it there too)
     * @return the prebuilt image's name; empty when no prebuild ran, or it ended without a status (then the caller
     *         builds the image itself)
     * @throws AssertionError when the prebuild failed, with the end of its log
     */
    private static Optional<String> prebuilt(Path log) {
        Path dir = Path.of("target", "container-image");
        Path nameFile = dir.resolve("prebuild.name");
        Path status = dir.resolve("prebuild.status");
        Path pid = dir.resolve("prebuild.pid");
        try {
            if (!Files.exists(nameFile)) {
                return Optional.empty();
            }
            String name = Files.readString(nameFile).trim();
            long deadline = System.nanoTime() + BUILD_TIMEOUT.toNanos();
            while (!Files.exists(status)) {
                boolean running = Files.exists(pid) && ProcessHandle.of(Long.parseLong(Files.readString(pid).trim()))
                        .map(ProcessHandle::isAlive).orElse(false);
                if (!running && !Files.exists(status)) {
                    return Optional.empty();
                }
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("the background image build did not finish within " + BUILD_TIMEOUT);
                }
                TimeUnit.MILLISECONDS.sleep(500);
            }
            // Consumed: a later run of this test alone builds its own image.
            Files.deleteIfExists(nameFile);
            String exit = Files.readString(status).trim();
            Files.deleteIfExists(status);
            Path built = dir.resolve("build.log");
            if (!built.toAbsolutePath().equals(log.toAbsolutePath()) && Files.exists(built)) {
                Files.copy(built, log, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            }
            if (!exit.equals("0")) {
                List<String> lines = Files.readAllLines(log);
                throw new AssertionError("scripts/build-image.sh " + name + " (background prebuild) exited " + exit
                                         + ":\n" + String.join("\n", lines.subList(Math.max(0, lines.size() - 40),
                                                                                    lines.size())));
            }
            return Optional.of(name);
        } catch (IOException e) {
            throw new AssertionError("reading the background image build's files in " + dir, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while waiting for the background image build", e);
        }
    }

    /**
     * The image's name in buildah's storage.
     *
     * @return e.g. {@code localhost/payments-authorization:it-prebuild-1234}
     */
    String name() {
        return name;
    }

    /**
     * The image's OCI configuration ({@code User}, {@code Env}, {@code Entrypoint}, {@code WorkingDir}, ...).
     *
     * @return the {@code config} object of the OCI image configuration
     */
    JsonNode config() {
        return inspection.path("OCIv1").path("config");
    }

    /**
     * The runtime stage's base image, as buildah recorded it.
     *
     * @return image name, e.g. a stand-in's {@code localhost/payments-authorization-stand-in/eclipse-temurin:...}
     */
    String baseImage() {
        return inspection.path("ImageAnnotations").path("org.opencontainers.image.base.name").asText();
    }

    /**
     * Mounts this image's root filesystem (a fresh buildah working container; nothing is written to it).
     *
     * @return the mounted root; close it to unmount
     */
    Mounted mount() {
        return mount(name);
    }

    /**
     * Mounts an image's root filesystem.
     *
     * @param image image name
     * @return the mounted root; close it to unmount
     */
    static Mounted mount(String image) {
        String container = exec(List.of("buildah", "from", "--pull-never", "--quiet", image), COMMAND_TIMEOUT, null)
                .trim();
        return new Mounted(container, Path.of(exec(List.of("buildah", "mount", container), COMMAND_TIMEOUT, null)
                                                      .trim()));
    }

    /**
     * Runs the image with {@code scripts/run-image.sh} and waits until both listeners are bound.
     *
     * @param env     variables added to the image's environment, e.g. {@code JDK_JAVA_OPTIONS}
     * @param tmp     host directory mounted as the container's {@code /tmp}
     * @param pidFile where the script writes the host's process id of the container's PID 1
     * @return the running script (its output is the service's); exits with PID 1's status
     * @throws IOException when it does not start within 60 s
     */
    ServiceProcess run(Map<String, String> env, Path tmp, Path pidFile) throws IOException {
        List<String> command = new ArrayList<>(List.of("bash", "scripts/run-image.sh", "--tmp", tmp.toString(),
                                                       "--pid-file", pidFile.toString()));
        env.forEach((key, value) -> command.addAll(List.of("-e", key + "=" + value)));
        command.add(name);
        return ServiceProcess.launch(command, Map.of(), Duration.ofSeconds(60));
    }

    /**
     * Every path under a root with what identifies its content: type, mode, owner, size and modification time for
     * files, the target for symbolic links, type, mode and owner for directories (whose times change with any
     * mount made on them).
     *
     * @param root a mounted root filesystem
     * @return path relative to the root (e.g. {@code app/app.aot}) to its description
     * @throws IOException when the tree cannot be read
     */
    static Map<String, String> tree(Path root) throws IOException {
        Map<String, String> tree = new TreeMap<>();
        try (Stream<Path> paths = Files.walk(root)) {
            for (Path path : (Iterable<Path>) paths::iterator) {
                PosixFileAttributes attributes = Files.readAttributes(path, PosixFileAttributes.class,
                                                                      LinkOption.NOFOLLOW_LINKS);
                String owner = attributes.owner().getName() + ":" + attributes.group().getName() + " "
                               + PosixFilePermissions.toString(attributes.permissions());
                String description;
                if (attributes.isSymbolicLink()) {
                    description = "link -> " + Files.readSymbolicLink(path);
                } else if (attributes.isDirectory()) {
                    description = "dir " + owner;
                } else {
                    description = (attributes.isRegularFile() ? "file " : "other ") + owner + " " + attributes.size()
                                  + " bytes, modified " + attributes.lastModifiedTime();
                }
                tree.put(root.relativize(path).toString(), description);
            }
        }
        return tree;
    }

    /** Removes the image (the stand-in bases stay: they are the cache of the next build). */
    @Override
    public void close() {
        exec(List.of("buildah", "rmi", name), COMMAND_TIMEOUT, null);
    }

    /**
     * A mounted image root filesystem.
     *
     * @param container buildah working container
     * @param root      where its root filesystem is mounted
     */
    record Mounted(String container, Path root) implements AutoCloseable {
        @Override
        public void close() {
            exec(List.of("buildah", "umount", container), COMMAND_TIMEOUT, null);
            exec(List.of("buildah", "rm", container), COMMAND_TIMEOUT, null);
        }
    }

    private static boolean isRoot() {
        try {
            return Integer.valueOf(0).equals(Files.getAttribute(Path.of("/proc/self"), "unix:uid"));
        } catch (IOException | UnsupportedOperationException e) {
            return false;
        }
    }

    // Runs a command to completion; returns its standard output, or writes all output to the log when one is given.
    private static String exec(List<String> command, Duration timeout, Path log) {
        try {
            Path out = log != null ? log : Files.createTempFile("container-image", ".out");
            try {
                Files.createDirectories(out.toAbsolutePath().getParent());
                ProcessBuilder builder = new ProcessBuilder(command).redirectOutput(out.toFile());
                if (log != null) {
                    builder.redirectErrorStream(true);
                } else {
                    builder.redirectError(ProcessBuilder.Redirect.INHERIT);
                }
                Process process = builder.start();
                if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                    process.destroyForcibly();
                    throw new AssertionError(String.join(" ", command) + " did not finish within " + timeout);
                }
                String output = Files.readString(out);
                if (process.exitValue() != 0) {
                    List<String> lines = output.lines().toList();
                    throw new AssertionError(String.join(" ", command) + " exited with " + process.exitValue()
                                             + "; its last lines:\n"
                                             + String.join("\n", lines.subList(Math.max(0, lines.size() - 60),
                                                                               lines.size())));
                }
                return output;
            } finally {
                if (log == null) {
                    Files.deleteIfExists(out);
                }
            }
        } catch (IOException e) {
            throw new AssertionError("Could not run " + command, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("Interrupted running " + command, e);
        }
    }
}
