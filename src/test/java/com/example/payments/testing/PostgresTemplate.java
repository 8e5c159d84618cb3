package com.example.payments.testing;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.UserPrincipalLookupService;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * One {@code initdb} per build instead of one per server: a stopped, freshly initialized cluster under
 * {@code target/postgres-template/pg<version>-<owner>/data} that every {@link PostgresServer} copies
 * ({@code cp -a}) into its own directory. A copy is what {@code initdb} would have made (same options: superuser
 * {@code postgres}, trust authentication, UTF8, locale C), at a tenth of its CPU (~1.3 s per {@code initdb}).
 *
 * <p>The template appears atomically: it is initialized in a temporary directory and renamed into place, so a
 * reader never sees half of one. Forks of the same build serialize on a file lock next to it (one {@code initdb}, not
 * one per fork); a second writer that loses the rename anyway discards its copy. {@code load-tests/lib/postgres.sh}
 * builds and uses the same template (same name, same options), so the load-test smoke runs reuse the one the tests
 * made. The version in the name (from {@code initdb --version}) keeps an upgraded PostgreSQL from reusing an old
 * template; the owner ({@code postgres} when running as root, else the user) keeps ownership right.
 */
final class PostgresTemplate {

    private static final Pattern VERSION = Pattern.compile("\\(PostgreSQL\\) (\\S+)");
    private static final Map<Path, Path> READY = new ConcurrentHashMap<>();

    private PostgresTemplate() {
    }

    /**
     * Copies the template cluster to {@code target}, building the template first when this build has none.
     *
     * @param bin    the PostgreSQL binaries ({@code initdb})
     * @param target the new data directory; must not exist, its parent must (owned by the server user)
     * @throws IOException when {@code initdb} or the copy fails
     */
    static void copyTo(Path bin, Path target) throws IOException {
        Path template = READY.get(bin);
        if (template == null) {
            template = ensure(bin);
            READY.put(bin, template);
        }
        PostgresServer.run(Duration.ofSeconds(60), List.of("cp", "-a", template.toString(), target.toString()));
    }

    private static synchronized Path ensure(Path bin) throws IOException {
        String name = "pg" + version(bin) + "-" + (PostgresServer.root() ? PostgresServer.USER
                                                                           : System.getProperty("user.name"));
        Path root = Path.of("target", "postgres-template").toAbsolutePath();
        Path template = root.resolve(name);
        if (Files.isDirectory(template.resolve("data"))) {
            return template.resolve("data");
        }
        Files.createDirectories(root);
        try (FileChannel file = FileChannel.open(root.resolve(name + ".lock"), StandardOpenOption.CREATE,
                                                 StandardOpenOption.WRITE);
             FileLock lock = file.lock()) {
            if (!Files.isDirectory(template.resolve("data"))) {
                build(bin, root, template);
            }
        }
        return template.resolve("data");
    }

    private static void build(Path bin, Path root, Path template) throws IOException {
        // initdb in /tmp, which the postgres user can reach when we are root; then into target/ and renamed.
        Path work = Files.createTempDirectory("postgres-template-");
        Path staging = Files.createTempDirectory(root, "." + template.getFileName() + "-");
        try {
            if (PostgresServer.root()) {
                UserPrincipalLookupService users = work.getFileSystem().getUserPrincipalLookupService();
                Files.setOwner(work, users.lookupPrincipalByName(PostgresServer.USER));
            }
            PostgresServer.run(Duration.ofSeconds(60), PostgresServer.asServerUser(
                    bin.resolve("initdb").toString(), "-D", work.resolve("data").toString(), "-A", "trust",
                    "-U", PostgresServer.USER, "-E", "UTF8", "--locale=C", "--no-sync"));
            PostgresServer.run(Duration.ofSeconds(60), List.of("cp", "-a", work.resolve("data").toString(),
                                                               staging.resolve("data").toString()));
            try {
                Files.move(staging, template, StandardCopyOption.ATOMIC_MOVE);
            } catch (IOException e) {
                // another writer (a load-test script, which does not take this lock) was first: its template is
                // as good as ours
                if (!Files.isDirectory(template.resolve("data"))) {
                    throw e;
                }
            }
        } finally {
            delete(work);
            delete(staging);
        }
    }

    private static String version(Path bin) throws IOException {
        Path output = Files.createTempFile("initdb-version-", ".txt");
        try {
            Process process = new ProcessBuilder(bin.resolve("initdb").toString(), "--version")
                    .redirectErrorStream(true).redirectOutput(output.toFile()).start();
            process.waitFor();
            Matcher matcher = VERSION.matcher(Files.readString(output));
            if (!matcher.find()) {
                throw new IOException("initdb --version: no version in " + Files.readString(output));
            }
            return matcher.group(1).replaceAll("[^0-9A-Za-z.]", "_");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(e);
        } finally {
            Files.deleteIfExists(output);
        }
    }

    private static void delete(Path dir) {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        } catch (IOException e) {
            // a temporary directory left behind
        }
    }
}
