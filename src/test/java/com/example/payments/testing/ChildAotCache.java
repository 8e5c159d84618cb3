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
import java.util.function.Supplier;
import java.util.stream.Stream;

/**
 * AOT caches (JDK 25+, JEP 483 and 514) for the tests' child JVMs: a child that starts with one loads and links its
 * classes from the cache. Two, one per way the tests launch a JVM (a cache fits one class path only):
 * {@link #SERVICE}, the built jar as {@link ServiceProcess} runs it (a start and stop 1.7 against 3.6 CPU-s, measured
 * on the 2-core CI machine; the integration tests start well over a hundred), and {@link #ISSUER_SIMULATOR}, the
 * issuer simulator as {@link IssuerSimulatorProcess} runs it (1.2 against 3.6 CPU-s with C1).
 *
 * <p>Each cache is trained once per build, by the first test that needs it, under a file lock that the test JVMs of
 * the build share (one lock per cache): the child runs as the tests run it (C1 only, no warm-up, the test keys), answers one request, and
 * exits on SIGTERM, which writes {@code target/child-aot/<name>.aot}. Jars newer than the cache train it again. Any
 * failure leaves the children without the cache (a slower start, the same behaviour), never a failed test: the JVM's
 * AOT mode stays {@code auto}, and the cache's log lines are off, so a cache the JVM refuses (another class path,
 * another collector) changes nothing in the output the tests read.
 */
public final class ChildAotCache {

    // Before the instances: their constructor reads DIR.
    private static final Path DIR = Path.of("target", "child-aot");
    private static final List<String> QUIET = List.of("-Xlog:aot*=off", "-Xlog:cds*=off");
    /** A training run's exit assembles the cache in a JVM of its own: tens of seconds on a loaded machine. */
    static final Duration EXIT_WAIT = Duration.ofSeconds(180);

    /** The service's jar ({@code -jar}), trained by a start, one authorization, a health check and SIGTERM (exit 0). */
    public static final ChildAotCache SERVICE = new ChildAotCache("app", () -> List.of(BuiltJar.path()),
                                                                  ChildAotCache::trainService);
    /** The issuer simulator (its class path), trained by a start, one authorization and SIGTERM. */
    public static final ChildAotCache ISSUER_SIMULATOR = new ChildAotCache(
            "issuer-simulator", () -> List.of(BuiltJar.path(), BuiltJar.testTools()), ChildAotCache::trainSimulator);

    private final Path cache;
    private final Path failed;
    // One per cache: a JVM holding one cache's lock while it trains the other's would get an overlapping-lock error.
    private final Path lock;
    private final Supplier<List<Path>> inputs;
    private final Training training;
    private List<String> options;

    /** One training run: starts the child writing the cache to its output at exit, and stops it. */
    @FunctionalInterface
    private interface Training {
        /**
         * @param output where the child writes the cache
         * @return whether the child ended as it should (the cache is then checked to exist)
         */
        boolean run(Path output) throws Exception;
    }

    private ChildAotCache(String name, Supplier<List<Path>> inputs, Training training) {
        this.cache = DIR.resolve(name + ".aot");
        this.failed = DIR.resolve(name + ".training-failed");
        this.lock = DIR.resolve(name + ".lock");
        this.inputs = inputs;
        this.training = training;
    }

    /**
     * The JVM options that make a child use the cache, training it first when this build has none.
     *
     * @return {@code -XX:AOTCache=target/child-aot/<name>.aot} with the cache's logging off, or nothing on a JDK before
     *         25 or when training failed
     */
    public synchronized List<String> options() {
        if (options == null) {
            options = trained() ? with("-XX:AOTCache=" + cache.toAbsolutePath()) : List.of();
        }
        return options;
    }

    /**
     * The cache file itself, for JVMs the tests do not start through {@link ServiceProcess} (the load-test scripts'
     * smoke runs), training it first when this build has none.
     *
     * @return {@code target/child-aot/<name>.aot}, or empty on a JDK before 25 or when training failed
     */
    public Optional<Path> file() {
        return options().isEmpty() ? Optional.empty() : Optional.of(cache.toAbsolutePath());
    }

    /**
     * The options of a training run: it writes the cache at exit.
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

    private boolean trained() {
        if (Runtime.version().feature() < 25) {
            return false;
        }
        try {
            Files.createDirectories(DIR);
            FileTime built = FileTime.fromMillis(0);
            for (Path input : inputs.get()) {
                FileTime modified = Files.getLastModifiedTime(input);
                built = modified.compareTo(built) > 0 ? modified : built;
            }
            try (FileChannel channel = FileChannel.open(lock, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
                    FileLock ignored = channel.lock()) {
                if (newerThan(cache, built)) {
                    return true;
                }
                if (newerThan(failed, built)) {
                    return false;
                }
                return train(built);
            }
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    private static boolean newerThan(Path file, FileTime built) throws IOException {
        return Files.isRegularFile(file) && Files.size(file) > 0
               && Files.getLastModifiedTime(file).compareTo(built) >= 0;
    }

    private boolean train(FileTime built) throws IOException {
        Path output = DIR.resolve(cache.getFileName() + "-" + UUID.randomUUID());
        try {
            if (training.run(output) && Files.isRegularFile(output) && Files.size(output) > 0) {
                Files.move(output, cache, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
                return true;
            }
        } catch (Exception e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
        } finally {
            Files.deleteIfExists(output);
        }
        Files.writeString(failed, "training failed; children start without the cache\n");
        Files.setLastModifiedTime(failed, FileTime.fromMillis(Math.max(System.currentTimeMillis(), built.toMillis())));
        return false;
    }

    private static boolean trainService(Path output) throws Exception {
        try (ServiceProcess service = ServiceProcess.startTraining(output)) {
            service.awaitReady(Duration.ofSeconds(60));
            String base = "http://127.0.0.1:" + service.businessPort();
            Http.post(base + "/v1/authorizations", UUID.randomUUID().toString(), Http.VALID_BODY);
            Http.get("http://127.0.0.1:" + service.healthPort() + "/health/live");
            service.signal("TERM");
            return service.awaitExit(EXIT_WAIT) == 0;
        }
    }

    private static boolean trainSimulator(Path output) throws Exception {
        try (IssuerSimulatorProcess issuer = IssuerSimulatorProcess.startTraining(output)) {
            Http.post(issuer.uri() + "/v1/authorizations", "att_" + UUID.randomUUID().toString().replace("-", ""),
                      Http.VALID_BODY);
            issuer.signal("TERM");
            // No handler of its own: the JVM's default for SIGTERM (143), which still writes the cache as it exits;
            // 0 should the simulator ever handle it. Still running after EXIT_WAIT: -1.
            int status = issuer.awaitExit(EXIT_WAIT);
            return status == 143 || status == 0;
        }
    }
}
