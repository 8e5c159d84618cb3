package com.example.payments;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.URL;
import java.net.URLClassLoader;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import com.example.payments.testing.BuiltJar;
import com.example.payments.testing.Spellings;
import com.example.payments.testing.StableIdentities;
import com.example.payments.testing.Tools;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.empty;
import static org.hamcrest.Matchers.is;

/**
 * {@code scripts/rename.sh} renames the template in one step: run on a copy of the tree, the renamed project builds
 * (offline, with the dependencies this build already downloaded), its jar carries the new name, no old spelling is
 * left anywhere in any form (escaped as in a regular expression or a Java string, percent-encoded, a backslash-u
 * escape, an HTML character reference) but in the database migrations, which stay byte for byte (Flyway checksums
 * them), the renamed jar derives the same attempt id, resource id and Redis key prefix as this build (a deployed
 * service renamed keeps its ids and records), and the renamed service starts,
 * answers {@code /ping}, becomes ready, answers problems under the new base URI, and stops with exit 0 on SIGTERM.
 */
class RenameIT {

    private static final Set<String> NOT_COPIED = Set.of(".git", "target", ".tools", "node_modules", "__pycache__");
    /** Flyway checksums every applied migration: the rename leaves them byte for byte. */
    private static final Path MIGRATIONS = Path.of("src", "main", "resources", "db", "migration");
    /** Names no fork is likely to have, so that the test also runs on a renamed tree. */
    private static final String GROUP = "org.renamed.group";
    private static final String ARTIFACT = "renamed-service";
    private static final String PACKAGE = "org.renamed.pkg";
    private static final String PROBLEMS = "https://problems.renamed.test/problems";
    /** One request's identities under a fixed fingerprint secret, as every build so far derived them. */
    private static final String SECRET = "rename-it-fixed-fingerprint-secret";
    private static final List<String> PINNED_IDENTITIES = List.of("att_6878a0043d3e79cf042f12c48158e198",
                                                                  "2fc9aaef-f899-8073-90cd-196dcf0f5103");
    private static final Pattern STARTED = Pattern.compile(
            "serving business traffic on port (\\d+), health probes and metrics on port (\\d+)");

    @Test
    void theRenamedTreeBuildsAndItsJarServes(@TempDir Path dir) throws Exception {
        Tools.require("perl", "apt-get install -y perl");
        copyTree(Path.of("").toAbsolutePath(), dir);

        // Minutes, not seconds: perl over the whole tree took over a minute on a loaded 2-core CI machine.
        Result rename = run(dir, Duration.ofMinutes(4), "bash", "scripts/rename.sh", GROUP, ARTIFACT, PACKAGE, PROBLEMS);
        assertThat(rename.output(), rename.exit(), is(0));
        assertThat("old names left after the rename", oldNamesIn(dir, oldNames()), empty());
        try (Stream<Path> migrations = Files.list(MIGRATIONS)) {
            for (Path migration : migrations.toList()) {
                assertThat(migration + " changed by the rename: Flyway would refuse its new checksum",
                           Files.mismatch(migration, dir.resolve(migration)), is(-1L));
            }
        }
        assertThat(Files.isRegularFile(dir.resolve("src/main/java/org/renamed/pkg/Main.java")), is(true));
        assertThat(Files.readString(dir.resolve("pom.xml")), containsString("<groupId>" + GROUP + "</groupId>"));

        // The copy's own wrapper: the Maven version this build ran (its distribution and every plugin it needs are
        // already downloaded); a Maven on the PATH (Debian's 3.8) wants plugin dependencies this build never fetched.
        // No SBOM: the renamed build is checked for its jar, not its bill of materials (SbomIT checks that).
        Result build = run(dir, Duration.ofMinutes(8), "bash", "mvnw", "-B", "-o", "-q", "package", "-DskipTests",
                           "-Dcyclonedx.skip=true");
        assertThat(build.output(), build.exit(), is(0));
        Path jar = BuiltJar.path(dir);
        assertThat(jar.getFileName().toString(), is(ARTIFACT + ".jar"));
        List<String> before = StableIdentities.of(RenameIT.class.getClassLoader(), RenameIT.class.getPackageName(), SECRET);
        assertThat("identities of this build", before.subList(0, 2), is(PINNED_IDENTITIES));
        assertThat("application.yaml's key prefix is the code's", before.get(3), is(before.get(2)));
        try (URLClassLoader renamed = new URLClassLoader(new URL[] {jar.toUri().toURL()},
                                                         ClassLoader.getPlatformClassLoader())) {
            assertThat("attempt id, resource id and default Redis key prefix after the rename",
                       StableIdentities.of(renamed, PACKAGE, SECRET), is(before));
        }

        smokeTest(dir, jar);
    }

    @Test
    void badNamesAreRefusedWithExit2BeforeAnythingChanges(@TempDir Path dir) throws Exception {
        Files.createDirectories(dir.resolve("scripts"));
        Files.copy(Path.of("scripts", "rename.sh"), dir.resolve("scripts/rename.sh"));
        List<List<String>> bad = List.of(
                List.of("Com.Acme", "card-auth", "com.acme.cardauth", "https://errors.acme.com/problems"),
                List.of("com.acme", "Card_Auth", "com.acme.cardauth", "https://errors.acme.com/problems"),
                List.of("com.acme", "card-auth", "com.acme.card-auth", "https://errors.acme.com/problems"),
                List.of("com.acme", "card-auth", "com.acme.cardauth", "errors.acme.com/problems"),
                List.of("com.acme", "card-auth", "com.acme.cardauth"));
        for (List<String> arguments : bad) {
            List<String> command = new ArrayList<>(List.of("bash", "scripts/rename.sh"));
            command.addAll(arguments);
            Result result = run(dir, Duration.ofSeconds(30), command.toArray(String[]::new));
            assertThat(arguments + ": " + result.output(), result.exit(), is(2));
        }
    }

    private static void smokeTest(Path dir, Path jar) throws Exception {
        Process service = new ProcessBuilder(ProcessHandle.current().info().command().orElse("java"),
                                             "-Dserver.port=0", "-Dhealth-server.port=0", "-jar", jar.toString())
                .directory(dir.toFile()).redirectErrorStream(true).start();
        StringBuilder log = new StringBuilder();
        CompletableFuture<int[]> ports = new CompletableFuture<>();
        Thread reader = Thread.ofPlatform().daemon().start(() -> {
            try (BufferedReader lines = new BufferedReader(new InputStreamReader(service.getInputStream(),
                                                                                 StandardCharsets.UTF_8))) {
                for (String line = lines.readLine(); line != null; line = lines.readLine()) {
                    synchronized (log) {
                        log.append(line).append('\n');
                    }
                    Matcher started = STARTED.matcher(line);
                    if (started.find()) {
                        ports.complete(new int[] {Integer.parseInt(started.group(1)),
                                                  Integer.parseInt(started.group(2))});
                    }
                }
            } catch (IOException e) {
                ports.completeExceptionally(e);
            }
        });
        try {
            int[] port = ports.get(60, TimeUnit.SECONDS);
            HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
            assertThat(get(client, "http://127.0.0.1:" + port[0] + "/ping").body(), is("pong"));
            awaitReady(client, "http://127.0.0.1:" + port[1] + "/health/ready");
            HttpResponse<String> unauthenticated = client.send(
                    HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port[0] + "/v1/authorizations"))
                            .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString("{}"))
                            .timeout(Duration.ofSeconds(5)).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(unauthenticated.statusCode(), is(401));
            assertThat(unauthenticated.body(), containsString("\"type\":\"" + PROBLEMS + "/"));
        } finally {
            service.destroy();      // SIGTERM
        }
        assertThat("exited within 30 s of SIGTERM", service.waitFor(30, TimeUnit.SECONDS), is(true));
        reader.join(5_000);
        synchronized (log) {
            assertThat("exit status after SIGTERM; log:\n" + log, service.exitValue(), is(0));
        }
    }

    private static void awaitReady(HttpClient client, String url) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        int status = 0;
        while (System.nanoTime() < deadline) {
            status = get(client, url).statusCode();
            if (status == 200) {
                return;
            }
            Thread.sleep(200);
        }
        throw new AssertionError("not ready within 30 s: " + url + " answered " + status);
    }

    private static HttpResponse<String> get(HttpClient client, String url) throws Exception {
        return client.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(5)).build(),
                           HttpResponse.BodyHandlers.ofString());
    }

    /**
     * The current names, each spelling, read from this build: the artifact, this package (and its parents of two
     * parts or more, e.g. a logger named after one), the problem base URI and its host.
     */
    private static List<String> oldNames() throws IOException {
        java.util.Properties built = new java.util.Properties();
        try (var reader = Files.newBufferedReader(Path.of("target", "jar.properties"))) {
            built.load(reader);
        }
        String artifact = built.getProperty("artifact");
        String camel = Stream.of(artifact.split("-"))
                .map(part -> Character.toUpperCase(part.charAt(0)) + part.substring(1))
                .collect(java.util.stream.Collectors.joining());
        String uri = com.example.payments.http.Problem.TYPE_BASE;
        String pkg = RenameIT.class.getPackageName();
        List<String> names = new ArrayList<>(List.of(artifact, artifact.replace('-', '_'), camel, pkg,
                                                     pkg.replace('.', '/'), uri.substring(0, uri.length() - 1),
                                                     URI.create(uri).getHost()));
        for (int dot = pkg.lastIndexOf('.'); dot > 0; dot = pkg.lastIndexOf('.', dot - 1)) {
            String parent = pkg.substring(0, dot);
            if (parent.contains(".") && !PACKAGE.startsWith(parent) && !GROUP.startsWith(parent)) {
                names.add(parent);
            }
        }
        return names;
    }

    private static List<String> oldNamesIn(Path dir, List<String> oldNames) throws IOException {
        List<String> found = new ArrayList<>();
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path file : files.filter(Files::isRegularFile).toList()) {
                String relative = dir.relativize(file).toString();
                if (relative.equals("scripts/rename.sh") || relative.endsWith(".png")
                    || dir.relativize(file).startsWith(MIGRATIONS)) {
                    continue;
                }
                for (String name : oldNames) {
                    if (relative.contains(name)) {
                        found.add(relative + " (file name)");
                    }
                }
                String text = new String(Files.readAllBytes(file), StandardCharsets.ISO_8859_1);
                String plain = Spellings.unescaped(text);
                for (String name : oldNames) {
                    if (Spellings.holds(text, name)) {
                        found.add(relative + ": " + name);
                    } else if (Spellings.holds(plain, name)) {
                        found.add(relative + ": " + name + " (escaped)");
                    }
                }
            }
        }
        return found;
    }

    private static void copyTree(Path from, Path to) throws IOException {
        try (Stream<Path> paths = Files.walk(from)) {
            for (Path path : paths.filter(p -> from.relativize(p).toString().isEmpty()
                                               || isCopied(from.relativize(p))).toList()) {
                Path target = to.resolve(from.relativize(path).toString());
                if (Files.isDirectory(path, LinkOption.NOFOLLOW_LINKS)) {
                    Files.createDirectories(target);
                } else if (Files.isRegularFile(path, LinkOption.NOFOLLOW_LINKS)) {
                    Files.copy(path, target, StandardCopyOption.COPY_ATTRIBUTES, StandardCopyOption.REPLACE_EXISTING);
                }
            }
        }
    }

    private static boolean isCopied(Path relative) {
        for (Path part : relative) {
            if (NOT_COPIED.contains(part.toString())) {
                return false;
            }
        }
        return true;
    }

    private record Result(int exit, String output) {
    }

    private static Result run(Path dir, Duration timeout, String... command) throws Exception {
        ProcessBuilder builder = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true);
        builder.environment().put("JAVA_HOME", System.getProperty("java.home"));
        Path output = Files.createTempFile("rename-it-", ".log");
        builder.redirectOutput(output.toFile());
        Process process = builder.start();
        try {
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly();
                throw new AssertionError(String.join(" ", command) + " did not finish within " + timeout + ":\n"
                                         + Files.readString(output));
            }
            return new Result(process.exitValue(), Files.readString(output));
        } finally {
            Files.deleteIfExists(output);
        }
    }
}
