package com.example.payments.testing;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.stream.Stream;

/**
 * An AOT cache (JDK 25+, JEP 483 and 514) of the built jar for the tests' child JVMs: a child that starts with it
 * loads and links its classes from the cache, about 1.9 CPU-s less per start and stop (3.6 against 1.7 CPU-s,
 * measured on the 2-core CI machine), and the integration tests start well over a hundred of them.
 *
 * <p>The cache is trained once per build, by the first test that needs it, under a file lock that the test JVMs of
 * the build share: the jar runs as the tests run it (C1 only, no warm-up, the test keys), takes a health check and an
 * authorization, and exits on SIGTERM, which writes {@code target/child-aot/app.aot}. A jar newer than the cache
 * trains it again. Any failure leaves the children without the cache (a slower start, the same behaviour), never a
 * failed test: the JVM's AOT mode stays {@code auto}, and the cache's log lines are off, so a cache the JVM refuses
 * (another class path, another collector) changes nothing in the output the tests read.
 */
public final class ChildAotCache {

    private static final Path DIR = Path.of("target", "child-aot");
    private static final Path CACHE = DIR.resolve("app.aot");
    private static final Path FAILED = DIR.resolve("training-failed");
    private static final List<String> QUIET = List.of("-Xlog:aot*=off", "-Xlog:cds*=off");
    private static List<String> options;

    private ChildAotCache() {
    }

    /**
     * The JVM options that make a child of the built jar use the cache, training it first when this build has none.
     *
     * @return {@code -XX:AOTCache=target/child-aot/app.aot} with the cache's logging off, or nothing on a JDK before
     *         25 or when training failed
     */
    public static synchronized List<String> options() {
        if (options == null) {
            options = trained() ? with("-XX:AOTCache=" + CACHE.toAbsolutePath()) : List.of();
        }
        return options;
    }

    /**
     * The cache file itself, for JVMs the tests do not start through {@link ServiceProcess} (the load-test scripts'
     * smoke runs), training it first when this build has none.
     *
     * @return {@code target/child-aot/app.aot}, or empty on a JDK before 25 or when training failed
     */
    public static Optional<Path> file() {
        return options().isEmpty() ? Optional.empty() : Optional.of(CACHE.toAbsolutePath());
    }

    /**
     * The options of the training run: it writes the cache at exit.
     *
     * @param output where the cache goes
     * @return {@code -XX:AOTCacheOutput=output} with the cache's logging off
     */
    static List<String> trainingOptions(Path output) {
        return with("-XX:AOTCacheOutput=" + output.toAbsolutePath());
    }

    private static List<String> with(String option) {
        return Stream.concat(Stream.of(option), QUIET.stream()).toList();
    }

    private static boolean trained() {
        if (Runtime.version().feature() < 25) {
            return false;
        }
        try {
            Files.createDirectories(DIR);
            FileTime jar = Files.getLastModifiedTime(BuiltJar.path());
            try (FileChannel lock = FileChannel.open(DIR.resolve("lock"), StandardOpenOption.CREATE,
                                                     StandardOpenOption.WRITE);
                    FileLock ignored = lock.lock()) {
                if (newerThan(CACHE, jar)) {
                    return true;
                }
                if (newerThan(FAILED, jar)) {
                    return false;
                }
                return train(jar);
            }
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    private static boolean newerThan(Path file, FileTime jar) throws IOException {
        return Files.isRegularFile(file) && Files.size(file) > 0
               && Files.getLastModifiedTime(file).compareTo(jar) >= 0;
    }

    private static boolean train(FileTime jar) throws IOException {
        Path output = DIR.resolve("app-" + UUID.randomUUID() + ".aot");
        try (ServiceProcess service = ServiceProcess.startTraining(output)) {
            service.awaitReady(Duration.ofSeconds(60));
            String base = "http://127.0.0.1:" + service.businessPort();
            Http.post(base + "/v1/authorizations", UUID.randomUUID().toString(), Http.VALID_BODY);
            Http.get("http://127.0.0.1:" + service.healthPort() + "/health/live");
            service.signal("TERM");
            // The exit assembles the cache in a JVM of its own: tens of seconds on a loaded machine.
            if (service.awaitExit(Duration.ofSeconds(180)) == 0 && Files.isRegularFile(output)
                && Files.size(output) > 0) {
                Files.move(output, CACHE, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
                return true;
            }
        } catch (Exception e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
        } finally {
            Files.deleteIfExists(output);
        }
        Files.writeString(FAILED, "training failed; children start without the cache\n");
        Files.setLastModifiedTime(FAILED, FileTime.fromMillis(Math.max(System.currentTimeMillis(), jar.toMillis())));
        return false;
    }
}
