package com.example.payments.deploy;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import com.example.payments.http.Json;
import com.example.payments.loadtests.SmokeRun;
import com.example.payments.testing.Http;
import com.example.payments.testing.MetricsScrape;
import com.example.payments.testing.ServiceProcess;
import com.example.payments.testing.TestCredentials;
import com.example.payments.testing.Tools;
import com.fasterxml.jackson.databind.JsonNode;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.anyOf;
import static org.hamcrest.Matchers.containsInAnyOrder;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.empty;
import static org.hamcrest.Matchers.endsWith;
import static org.hamcrest.Matchers.everyItem;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.isIn;
import static org.hamcrest.Matchers.not;
import static org.hamcrest.Matchers.nullValue;
import static org.hamcrest.Matchers.startsWith;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * The Dockerfile's promises proved on the real image: built from the unchanged Dockerfile by
 * {@code scripts/build-image.sh} (stand-in bases: the public registry is unreachable here), then run once by
 * {@code scripts/run-image.sh} as the pod runs it (PID 1 of its own PID namespace, uid 10001, read-only root, only
 * {@code /tmp} writable), and finally stopped with SIGTERM sent to that PID 1 while a POST is in flight.
 * Start-to-ready timings are measured by {@code load-tests/image-start/run.sh}, not asserted here; its smoke run
 * ({@code SMOKE=1}, one start per mode) runs last, on this image, so that a benchmark the image outgrew fails the build
 * without a second image build (the other scenarios' smoke runs are in {@code LoadTestSmokeIT}).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ContainerImageIT {

    private static final String UID = "10001";
    /** The test configuration's API keys, as the environment variable Helidon reads as {@code auth.api-keys}. */
    private static final String RUN_API_KEYS = "AUTH_API_KEYS";
    private static final Duration EXIT = Duration.ofSeconds(60);
    /** Build tools and sources that must not reach the runtime image (file names). */
    private static final Set<String> BUILD_TOOLS = Set.of("javac", "jar", "jlink", "jmod", "jdeps", "jshell", "javadoc",
                                                          "jpackage", "mvn", "mvnw", "gradle", "ant", "gcc", "cc",
                                                          "make", "git", "pom.xml");
    private static final Set<String> PACKAGE_MANAGERS = Set.of("dpkg", "apt", "apt-get", "pip", "pip3", "npm", "apk",
                                                               "yum", "dnf", "microdnf", "rpm");
    /** What the Dockerfile may add to its runtime base besides /app: the user it creates, and buildah's mount point. */
    private static final Set<String> ADDED_OUTSIDE_APP = Set.of("etc/passwd", "etc/passwd-", "etc/group", "etc/group-",
                                                                "etc/shadow", "etc/shadow-", "etc/gshadow",
                                                                "etc/gshadow-", "etc/hosts");
    /** Our test classes and helpers, and the test frameworks. */
    private static final Pattern TEST_CLASS = Pattern.compile(
            "com/example/payments/(.*(Test|IT|Tests)(\\$.*)?\\.class|testing/.*)|org/junit/.*|org/mockito/.*");

    private ContainerImage image;
    private ServiceProcess service;
    private Path work;
    private Path tmp;
    private long pid1;

    @BeforeAll
    void buildAndRunTheImage() throws Exception {
        image = ContainerImage.build(Path.of("target", "container-image", "build.log"));
        work = Files.createTempDirectory("container-image-it");
        tmp = work.resolve("tmp");
        Path pidFile = work.resolve("pid1");
        long start = System.nanoTime();
        service = image.run(Map.of("JDK_JAVA_OPTIONS", String.join(" ",
                "-Dserver.port=0", "-Dhealth-server.port=0", "-Dauthorizer.simulated-latency=PT2S",
                "-Xlog:aot=info:file=/tmp/aot.log", "-Xlog:class+load=info:file=/tmp/class-load.log"),
                RUN_API_KEYS, TestCredentials.API_KEYS), tmp, pidFile);
        service.awaitReady(EXIT);
        System.out.printf("Image %s (runtime base %s) ready %d ms after the start of run-image.sh (not asserted)%n",
                          image.config().path("Labels").path("org.opencontainers.image.title").asText(),
                          image.baseImage(), TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
        pid1 = Long.parseLong(Files.readString(pidFile).trim());
    }

    @AfterAll
    void stopAndRemove() throws Exception {
        try {
            if (service != null && service.alive()) {
                if (pid1 > 0) {
                    kill("KILL", pid1);
                }
                service.signal("TERM");
                service.awaitExit(EXIT);
            }
        } finally {
            if (service != null) {
                service.close();
            }
            if (image != null) {
                image.close();
            }
            if (work != null) {
                try (Stream<Path> paths = Files.walk(work)) {
                    for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                        Files.deleteIfExists(path);
                    }
                }
            }
        }
    }

    @Test
    @Order(1)
    void theImageIsLabelledWithItsLicenseVersionAndTheCommitItWasBuiltFrom() throws Exception {
        JsonNode labels = image.config().path("Labels");
        Path root = Path.of("").toAbsolutePath();
        java.util.regex.Matcher version = Pattern.compile("(?m)^    <version>(.+)</version>$")
                .matcher(Files.readString(root.resolve("pom.xml")));
        assertThat("the pom has a project version", version.find(), is(true));
        Process git = new ProcessBuilder("git", "-C", root.toString(), "rev-parse", "HEAD")
                .redirectErrorStream(true).start();
        String head = new String(git.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        String revision = git.waitFor() == 0 && head.matches("[0-9a-f]{40}") ? head : "unknown";

        assertThat(labels.path("org.opencontainers.image.licenses").asText(), is("Apache-2.0"));
        assertThat(labels.path("org.opencontainers.image.version").asText(), is(version.group(1)));
        assertThat(labels.path("org.opencontainers.image.revision").asText(), is(revision));
        assertThat(labels.path("org.opencontainers.image.source").asText(),
                   anyOf(is("unknown"), startsWith("https://"), startsWith("git@")));
    }

    @Test
    @Order(1)
    void configRunsTheJavaEntrypointAsUid10001InAppWithBothPortsExposed() {
        JsonNode config = image.config();

        assertThat(config.path("User").asText(), is(UID + ":" + UID));
        assertThat(config.path("WorkingDir").asText(), is("/app"));
        assertThat(strings(config.path("Entrypoint")).getFirst(), is("java"));
        assertThat(strings(config.path("Entrypoint")), hasItem("-XX:AOTCache=app.aot"));
        assertThat("no CMD for a shell to interpret", strings(config.path("Cmd")), empty());
        assertThat(fieldNames(config.path("ExposedPorts")), is(List.of("8080/tcp", "8081/tcp")));
    }

    @Test
    @Order(2)
    void theImageAddsOnlyTheServiceAndItsUserToItsBase() throws Exception {
        Map<String, String> base;
        Map<String, String> built;
        try (ContainerImage.Mounted baseRoot = ContainerImage.mount(image.baseImage());
             ContainerImage.Mounted root = image.mount()) {
            base = ContainerImage.tree(baseRoot.root());
            built = ContainerImage.tree(root.root());
        }
        Map<String, String> changes = new TreeMap<>();
        built.forEach((path, description) -> {
            if (!description.equals(base.get(path))) {
                changes.put(path, description);
            }
        });
        base.keySet().stream().filter(path -> !built.containsKey(path)).forEach(path -> changes.put(path, "removed"));

        assertThat(changes.toString(), changes.keySet().stream()
                .filter(path -> !path.equals("app") && !path.startsWith("app/")).toList(),
                   everyItem(isIn(ADDED_OUTSIDE_APP)));
        assertThat("buildah's RUN leaves an empty /etc/hosts mount point, nothing more", changes.get("etc/hosts"),
                   anyOf(nullValue(), containsString(" 0 bytes")));
        assertThat(changes.keySet().stream().filter(path -> path.startsWith("app/")).map(this::shape).distinct()
                           .sorted().toList(),
                   is(List.of("app/app.aot", "app/app.jar", "app/libs", "app/libs/*.jar")));
    }

    @Test
    @Order(3)
    void theImageHoldsNoBuildToolNoSourceAndNoTestClass() throws Exception {
        List<String> buildTools = new ArrayList<>();
        List<String> sources = new ArrayList<>();
        List<String> testClasses = new ArrayList<>();
        List<String> packageManagers;
        List<String> basePackageManagers;
        try (ContainerImage.Mounted root = image.mount();
             ContainerImage.Mounted baseRoot = ContainerImage.mount(image.baseImage())) {
            Map<String, String> tree = ContainerImage.tree(root.root());
            for (Map.Entry<String, String> entry : tree.entrySet()) {
                String path = entry.getKey();
                String fileName = Path.of(path).getFileName() == null ? "" : Path.of(path).getFileName().toString();
                // Files and links: Debian's libgcc has a directory /usr/share/gcc, which holds no compiler.
                if (BUILD_TOOLS.contains(fileName) && !entry.getValue().startsWith("dir ")) {
                    buildTools.add(path);
                }
                if (fileName.endsWith(".java") || path.equals("build") || path.equals("app/src")) {
                    sources.add(path);
                }
                if (path.startsWith("app/") && path.endsWith(".jar")) {
                    testClasses.addAll(testClasses(root.root().resolve(path)));
                }
            }
            packageManagers = packageManagers(tree.keySet());
            basePackageManagers = packageManagers(ContainerImage.tree(baseRoot.root()).keySet());
        }

        assertThat("build tools", buildTools, empty());
        assertThat("sources", sources, empty());
        assertThat("test classes and test libraries", testClasses, empty());
        assertThat("package managers: only the base's own", packageManagers, is(basePackageManagers));
        System.out.println("Package managers the runtime base brings (kept): " + basePackageManagers);
    }

    @Test
    @Order(4)
    void bothListenersAnswerOnTheRunningImage() throws Exception {
        String health = "http://127.0.0.1:" + service.healthPort();
        String business = "http://127.0.0.1:" + service.businessPort();

        for (String probe : List.of("/health/live", "/health/ready", "/health/startup", "/metrics")) {
            assertThat(probe, Http.get(health + probe).statusCode(), is(200));
        }
        assertThat(Http.get(business + "/ping").body(), is("pong"));
        HttpResponse<String> authorization = Http.post(business + "/v1/authorizations", "\"image-it-1\"",
                                                       Http.VALID_BODY);
        assertThat(authorization.body(), authorization.statusCode(), is(201));
        assertThat("each port serves only its own routes", Http.get(business + "/health/live").statusCode(), is(404));
        assertThat(Http.get(health + "/ping").statusCode(), is(404));
    }

    @Test
    @Order(5)
    void theJvmUsesTheAotCacheTheBuildTrained() throws Exception {
        // To a file: the ENTRYPOINT sends the JVM's own logging on stdout nowhere (stdout is for log lines), and a
        // file output given through JDK_JAVA_OPTIONS, as an operator would, survives that.
        assertThat(Files.readString(tmp.resolve("aot.log")), containsString("Opened AOT cache app.aot."));
        try (Stream<String> classLoads = Files.lines(tmp.resolve("class-load.log"))) {
            assertThat("the application's own classes come from the AOT cache", classLoads
                    .filter(line -> line.contains(" com.example.payments.Main ")).toList().toString(),
                       containsString("source: shared objects file"));
        }
    }

    @Test
    @Order(6)
    void pidOneIsTheEntrypointAsUid10001OnAReadOnlyRoot() throws Exception {
        Path proc = Path.of("/proc", String.valueOf(pid1));
        Map<String, String> status = new TreeMap<>();
        Files.readAllLines(proc.resolve("status")).forEach(line -> {
            String[] parts = line.split(":\\s*", 2);
            status.put(parts[0], parts.length > 1 ? parts[1] : "");
        });

        assertThat("PID 1 of its namespace", status.get("NSpid"), endsWith("\t1"));
        assertThat(status.get("Uid"), is(String.join("\t", UID, UID, UID, UID)));
        assertThat(status.get("Gid"), is(String.join("\t", UID, UID, UID, UID)));
        assertThat("no supplementary groups", status.get("Groups").trim(), is(""));
        assertThat("the ENTRYPOINT itself, no shell in between", nulSeparated(proc.resolve("cmdline")),
                   is(strings(image.config().path("Entrypoint"))));
        List<String> environment = new ArrayList<>(strings(image.config().path("Env")));
        for (String added : List.of("JDK_JAVA_OPTIONS=", RUN_API_KEYS + "=")) {
            environment.add(nulSeparated(proc.resolve("environ")).stream()
                                    .filter(variable -> variable.startsWith(added)).findFirst().orElseThrow());
        }
        // The order of the variables is the container runtime's, not the image's: compare them as a set.
        assertThat("exactly the image's environment, plus what the run added", nulSeparated(proc.resolve("environ")),
                   containsInAnyOrder(environment.toArray(String[]::new)));
        assertThat(Files.readSymbolicLink(proc.resolve("cwd")).toString(), endsWith("/app"));

        Map<String, String> mounts = new TreeMap<>();
        for (String line : Files.readAllLines(proc.resolve("mountinfo"))) {
            String[] fields = line.split(" ");
            mounts.put(fields[4], fields[5]);
        }
        assertThat(mounts.toString(), mounts.get("/"), startsWith("ro"));
        assertThat("/app is part of the read-only root", mounts.keySet().stream()
                .filter(point -> point.startsWith("/app")).toList(), empty());
        assertThat(mounts.get("/tmp"), startsWith("rw"));
        FileSystemException write = assertThrows(FileSystemException.class, () -> Files.writeString(
                proc.resolve("root/app/written-by-the-test"), "even root cannot write here"));
        assertThat(write.getMessage(), containsString("Read-only file system"));
        try (Stream<Path> shm = Files.list(proc.resolve("root/dev/shm"))) {
            assertThat("nothing written to the other writable mount", shm.toList(), empty());
        }
    }

    @Test
    @Order(7)
    void aPostInFlightSurvivesSigtermToPidOneAndTheProcessExitsZero() throws Exception {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + service.businessPort()
                                                                + "/v1/authorizations"))
                .timeout(Duration.ofSeconds(30)).header("Content-Type", "application/json")
                .header("Idempotency-Key", "\"image-it-in-flight\"")
                .header("Authorization", TestCredentials.AUTHORIZATION)
                .POST(HttpRequest.BodyPublishers.ofString(Http.VALID_BODY)).build();
        CompletableFuture<HttpResponse<String>> post = Http.client()
                .sendAsync(request, HttpResponse.BodyHandlers.ofString());
        awaitInFlight();

        kill("TERM", pid1);
        int exit = service.awaitExit(EXIT);
        HttpResponse<String> response = post.get(30, TimeUnit.SECONDS);
        String output = String.join("\n", service.output());

        assertThat(output, exit, is(0));
        assertThat(response.body(), response.statusCode(), is(201));
        assertThat(Json.mapper().readTree(response.body()).path("status").asText(), is("APPROVED"));
        assertThat(output, containsString("requests cut off by the drain timeout: 0"));
        assertThat(output, containsString("PID 1 exited with status 0"));
        assertThat("the service never tried to write to the read-only root", output,
                   not(containsString("Read-only file system")));
        try (Stream<Path> written = Files.walk(tmp)) {
            System.out.println("What the service wrote to /tmp: " + written.map(tmp::relativize).toList());
        }
    }

    @Test
    @Order(8)
    void theImageStartBenchmarkRunsInSmokeModeOnThisImage() throws Exception {
        List<String> missing = SmokeRun.missing(List.of());
        if (!missing.isEmpty()) {
            Tools.unmet("the image-start smoke run needs " + missing + ": apt-get install -y python3");
        }
        SmokeRun run = SmokeRun.run("image-start", "image-start", List.of(), Map.of("IMAGE", image.name()),
                                    Path.of("target", "load-tests-smoke", "image-start").toAbsolutePath(),
                                    SmokeRun.TIMEOUT);
        run.assertSucceeded();
        // mode | starts | median ms | p90 ms | min ms | max ms: both modes started once and answered ready
        SmokeRun.assertFinds("image-start report", run.report("image-start.md"),
                             "\\n\\| aot \\| 1 \\| [1-9][0-9]* \\|.*\\n\\| plain \\| 1 \\| [1-9][0-9]* \\|");
    }

    private void awaitInFlight() throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(15).toNanos();
        while (MetricsScrape.of(service.healthPort()).sum("http_in_flight_requests") < 1) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("the POST never showed in http_in_flight_requests");
            }
            Thread.sleep(25);
        }
    }

    private static void kill(String signal, long pid) throws Exception {
        if (pid <= 1) {
            throw new IllegalArgumentException("no process to signal: " + pid);
        }
        Process kill = new ProcessBuilder("kill", "-" + signal, String.valueOf(pid)).inheritIO().start();
        if (kill.waitFor() != 0) {
            throw new IllegalStateException("kill -" + signal + " " + pid + " failed");
        }
    }

    // app/libs/helidon-webserver-4.5.0.jar -> app/libs/*.jar
    private String shape(String path) {
        return path.startsWith("app/libs/") ? "app/libs/*.jar" : path;
    }

    private static List<String> testClasses(Path jar) throws IOException {
        String name = jar.getFileName().toString();
        if (name.matches("(junit|mockito|hamcrest|opentest4j|kubernetes|helidon-webserver-testing).*")) {
            return List.of(jar.toString());
        }
        try (JarFile file = new JarFile(jar.toFile())) {
            return file.stream().map(JarEntry::getName).filter(entry -> TEST_CLASS.matcher(entry).matches())
                    .map(entry -> name + "!" + entry).toList();
        }
    }

    private static List<String> packageManagers(Set<String> paths) {
        return paths.stream().filter(path -> path.matches("(usr/)?s?bin/.*"))
                .filter(path -> PACKAGE_MANAGERS.contains(Path.of(path).getFileName().toString())).sorted().toList();
    }

    private static List<String> nulSeparated(Path file) throws IOException {
        String text = Files.readString(file, StandardCharsets.UTF_8);
        return Arrays.stream(text.split("\0")).filter(s -> !s.isEmpty()).toList();
    }

    private static List<String> strings(JsonNode array) {
        List<String> result = new ArrayList<>();
        array.forEach(node -> result.add(node.asText()));
        return result;
    }

    private static List<String> fieldNames(JsonNode object) {
        List<String> names = new ArrayList<>();
        object.fieldNames().forEachRemaining(names::add);
        return names.stream().sorted().toList();
    }
}
