package com.example.payments.deploy;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.hasItems;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The promises of the {@code Dockerfile}, checked as text, plus two linters. {@link ContainerImageIT} builds and runs
 * the image itself.
 */
class DockerfileTest {

    private static final Pattern JRE_IMAGE = Pattern.compile("eclipse-temurin:(\\d+)-jre\\S*");
    private static final Pattern NUMERIC_USER = Pattern.compile("(\\d+)(:\\d+)?");
    private static final Pattern ARG_DEFAULT = Pattern.compile("ARG ([A-Za-z_][A-Za-z0-9_]*)=(\\S+)");
    private static final Pattern ARG_REFERENCE = Pattern.compile("\\$\\{?([A-Za-z_][A-Za-z0-9_]*)}?");

    @Test
    void buildIsMultiStageWithDependenciesCachedApartFromSources() {
        List<String> build = stage(0);

        assertTrue(instructions("FROM").size() >= 2, "multi-stage: build and runtime");
        int pom = indexOf(build, "COPY pom.xml");
        int resolve = indexOf(build, "RUN mvn -B -q dependency:go-offline");
        int sources = indexOf(build, "COPY src");
        assertTrue(pom < resolve && resolve < sources, "COPY pom.xml, resolve dependencies, then COPY src");
    }

    @Test
    void runtimeIsAJre21OrNewerPinnedByTag() {
        String runtime = baseImages().getLast();
        Matcher jre = JRE_IMAGE.matcher(runtime);

        assertTrue(jre.matches(), () -> "runtime image " + runtime + " is not an eclipse-temurin JRE");
        assertTrue(Integer.parseInt(jre.group(1)) >= 21, "Helidon 4 needs Java 21 or newer");
        for (String base : baseImages()) {
            assertFalse(base.endsWith(":latest") || !base.contains(":"), () -> base + ": pin the base image by tag");
        }
    }

    @Test
    void baseImagesAreBuildArgumentsSoALocalBuildCanSubstituteThem() {
        for (String from : instructions("FROM")) {
            String image = from.split("\\s+")[1];
            assertTrue(image.matches("\\$\\{[A-Z_]+}"),
                       () -> from + ": take the base image from an ARG with the pinned tag as its default");
        }
        assertEquals(List.of("maven:3.9-eclipse-temurin-25", "eclipse-temurin:25-jre"), baseImages());
    }

    @Test
    void runtimeCarriesTheOciLabelsAfterItsLastRunSoARevisionDoesNotRebuildTheLayers() {
        List<String> runtime = stage(instructions("FROM").size() - 1);
        String labels = runtime.stream().filter(l -> l.startsWith("LABEL ")).findFirst().orElseThrow();
        for (String key : List.of("source", "version", "revision", "licenses")) {
            assertTrue(labels.contains("org.opencontainers.image." + key + "="), () -> "no OCI label " + key);
        }
        assertTrue(labels.contains("org.opencontainers.image.licenses=\"Apache-2.0\""), labels);
        int lastRun = 0;
        for (int i = 0; i < runtime.size(); i++) {
            if (runtime.get(i).startsWith("RUN ")) {
                lastRun = i;
            }
        }
        assertTrue(indexOf(runtime, "ARG REVISION") > lastRun,
                   "a build argument is part of every later RUN's cache key: declare REVISION after the last RUN");
    }

    @Test
    void entrypointIsExecFormJavaWithoutAShell() {
        List<String> entrypoints = instructions("ENTRYPOINT");
        assertEquals(1, entrypoints.size());
        String args = entrypoints.getFirst().substring("ENTRYPOINT".length()).trim();

        assertTrue(args.startsWith("[") && args.endsWith("]"), "exec form, so java is PID 1 and gets SIGTERM");
        assertTrue(args.startsWith("[\"java\""), () -> "the entrypoint runs java itself, not a wrapper: " + args);
        assertFalse(args.matches(".*\"(/bin/)?(ba)?sh\".*") || args.contains("\"-c\""), "no shell wrapper");
        assertTrue(args.contains("\"-jar\", \"app.jar\""), "the jar under the name the build stage gives it");
        assertTrue(instructions("CMD").isEmpty(), "no CMD: nothing for a shell to interpret");
    }

    @Test
    void runtimeRunsAsANumericNonRootUserAndExposesBothPorts() {
        assertTrue(imageUser() > 0, "USER must not be root");
        List<String> exposed = new ArrayList<>();
        instructions("EXPOSE").forEach(line -> exposed.addAll(List.of(line.substring("EXPOSE".length()).trim()
                                                                              .split("\\s+"))));

        assertThat(exposed, hasItems("8080", "8081"));
    }

    @Test
    void jvmFlagsRespectTheContainerLimits() {
        String entrypoint = instructions("ENTRYPOINT").getFirst();

        assertTrue(entrypoint.contains("-XX:MaxRAMPercentage="), "heap sized from the memory limit");
        assertTrue(entrypoint.contains("-XX:+ExitOnOutOfMemoryError"), "an OOM exits so the kubelet restarts it");
        assertFalse(entrypoint.contains("-Xmx"), "a fixed -Xmx ignores the container's limit");
    }

    @Test
    void aotTrainingRunUsesTheEntrypointsJvmFlags() {
        String training = stage(instructions("FROM").size() - 1).stream()
                .filter(l -> l.contains("-XX:AOTCacheOutput=app.aot")).findFirst()
                .orElseThrow(() -> new AssertionError("no AOT training run"));
        String entrypoint = instructions("ENTRYPOINT").getFirst();

        assertTrue(entrypoint.contains("\"-XX:AOTCache=app.aot\""), "the runtime must use the cache it trained");
        for (String flag : List.of("-XX:MaxRAMPercentage=75", "-XX:+ExitOnOutOfMemoryError", "-XX:+UseG1GC")) {
            assertTrue(training.contains(flag) && entrypoint.contains(flag),
                       () -> flag + " must be in both the training run and the ENTRYPOINT, or the cache may not fit");
        }
    }

    @Test
    void javaUtilLoggingGoesToLog4jAndTheJvmsOwnLoggingToStderr() {
        String training = stage(instructions("FROM").size() - 1).stream()
                .filter(l -> l.contains("-XX:AOTCacheOutput=app.aot")).findFirst().orElseThrow();
        String entrypoint = instructions("ENTRYPOINT").getFirst();
        for (String flag : List.of("-Djava.util.logging.manager=org.apache.logging.log4j.jul.LogManager",
                                   "-Xlog:all=off", "-Xlog:all=warning:stderr")) {
            assertTrue(training.contains(flag) && entrypoint.contains("\"" + flag + "\""),
                       () -> flag + " must be in both the training run and the ENTRYPOINT");
        }
    }

    @Test
    void aotTrainingRunStartsUnderABuildersFileDescriptorLimitOf1024() {
        // The service exits 2 when both connection caps, what it holds at startup (about 200 descriptors) and 64
        // spare do not fit `ulimit -n`; buildah runs build steps at 1024, where the default caps (1000 + 32) cannot.
        String training = String.join(" ", stage(instructions("FROM").size() - 1));
        Matcher business = Pattern.compile("-Dserver\\.max-tcp-connections=(\\d+)").matcher(training);
        Matcher health = Pattern.compile("-Dhealth-server\\.max-tcp-connections=(\\d+)").matcher(training);
        assertTrue(business.find() && health.find(), "the training run sets both connection caps");
        int needed = Integer.parseInt(business.group(1)) + Integer.parseInt(health.group(1)) + 64 + 400;
        assertTrue(needed <= 1024, () -> "caps + 64 spare + 400 held at startup = " + needed + " > 1024");
    }

    @Test
    void buildContextIsAnAllowListOfPomAndMainSources() throws IOException {
        List<String> lines = Files.readAllLines(DeployTools.projectRoot().resolve(".dockerignore")).stream()
                .map(String::trim).filter(l -> !l.isEmpty() && !l.startsWith("#")).toList();

        assertEquals(List.of("*", "!pom.xml", "!src/", "src/test/"), lines);
    }

    @Test
    void dockerfilelintFindsNoIssue() {
        Path lint = DeployTools.require(DeployTools.Tool.DOCKERFILELINT);
        DeployTools.Result result = DeployTools.run(DeployTools.projectRoot(), List.of(lint.toString(), "Dockerfile"));

        assertEquals(0, result.exitCode(), () -> result.stdout() + result.stderr());
    }

    @Test
    void dockerfileUtilsFindsNoIssue() {
        Path lint = DeployTools.require(DeployTools.Tool.DOCKERFILE_UTILS);
        DeployTools.Result result = DeployTools.run(DeployTools.projectRoot(),
                                                    List.of(lint.toString(), "lint", "Dockerfile"));

        assertEquals(0, result.exitCode(), () -> result.stdout() + result.stderr());
        assertEquals("", result.stdout().trim());
    }

    /**
     * The numeric UID of the runtime stage's {@code USER}; the Deployment's {@code runAsUser} must equal it.
     *
     * @return UID, e.g. 10001
     */
    static long imageUser() {
        List<String> users = stage(instructions("FROM").size() - 1).stream().filter(l -> l.startsWith("USER ")).toList();
        assertFalse(users.isEmpty(), "the runtime stage sets no USER: it would run as root");
        String user = users.getLast().substring("USER ".length()).trim();
        Matcher numeric = NUMERIC_USER.matcher(user);
        assertTrue(numeric.matches(), () -> "USER " + user + " must be numeric (uid[:gid]) for runAsNonRoot");
        return Long.parseLong(numeric.group(1));
    }

    /**
     * The base image of every stage, with the {@code ARG}s declared before the first {@code FROM} replaced by their
     * defaults: what {@code docker build .} uses without build arguments.
     */
    private static List<String> baseImages() {
        Map<String, String> defaults = new HashMap<>();
        List<String> all = instructions();
        for (String line : all.subList(0, indexOf(all, "FROM "))) {
            Matcher arg = ARG_DEFAULT.matcher(line);
            if (arg.matches()) {
                defaults.put(arg.group(1), arg.group(2));
            }
        }
        return instructions("FROM").stream().map(from -> {
            String image = from.split("\\s+")[1];
            Matcher reference = ARG_REFERENCE.matcher(image);
            if (!reference.matches()) {
                return image;
            }
            String value = defaults.get(reference.group(1));
            assertTrue(value != null, () -> from + ": ARG " + reference.group(1) + " has no default before the first FROM");
            return value;
        }).toList();
    }

    /** Instructions with continuation lines joined, comments dropped. */
    private static List<String> instructions() {
        try {
            String text = Files.readString(DeployTools.projectRoot().resolve("Dockerfile"));
            List<String> result = new ArrayList<>();
            for (String line : text.replaceAll("\\\\\\n\\s*", " ").split("\\n")) {
                String trimmed = line.trim();
                if (!trimmed.isEmpty() && !trimmed.startsWith("#")) {
                    result.add(trimmed);
                }
            }
            return result;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static List<String> instructions(String keyword) {
        return instructions().stream().filter(l -> l.startsWith(keyword + " ")).toList();
    }

    private static List<String> stage(int index) {
        List<String> all = instructions();
        List<Integer> starts = new ArrayList<>();
        for (int i = 0; i < all.size(); i++) {
            if (all.get(i).startsWith("FROM ")) {
                starts.add(i);
            }
        }
        int end = index + 1 < starts.size() ? starts.get(index + 1) : all.size();
        return all.subList(starts.get(index), end);
    }

    private static int indexOf(List<String> lines, String prefix) {
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).startsWith(prefix)) {
                return i;
            }
        }
        throw new AssertionError("no instruction starting with " + prefix);
    }
}
