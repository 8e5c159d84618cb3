package com.example.payments.loadtests;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Stream;

import com.example.payments.testing.ChildAotCache;
import com.example.payments.testing.PostgresServer;
import com.example.payments.testing.Tools;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;

/**
 * Every benchmark under {@code load-tests/} still starts and still writes its report: each scenario's {@code run.sh}
 * in smoke mode ({@code SMOKE=1}: a few seconds, a tiny load, the same instances, client and report generator as a full
 * run; see {@code load-tests/README.md}), so that a benchmark the service has outgrown (a setting it now requires or
 * refuses, a renamed jar, a changed log line) fails {@code ./mvnw -B verify} instead of the next person who runs it.
 *
 * <p>Each test asserts that its script exits 0 within {@link SmokeRun#TIMEOUT}, that its report exists under
 * {@code target/load-tests-smoke/<scenario>/reports/} with the numbers the scenario measures, that nothing was written
 * under {@code load-tests/reports} or {@code load-tests/results}, and that no process the script started outlived it.
 * The scripts run {@link #LANES} at a time (the tools check first, in the lane's thread), started together in
 * {@link #startAll}; each test waits for its own. {@code ./mvnw verify} runs this class after the other ITs, alone
 * (the pom's {@code load-test-smoke-alone} profile), so that its scripts have the machine to themselves.
 * A missing tool (haproxy, wrk, redis-server, PostgreSQL...) skips the test naming it, or fails it under
 * {@code CI=true} ({@link Tools}); {@code .ci/run} installs them. The image-start scenario's smoke run is in
 * {@code ContainerImageIT}, on the image that test builds.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class LoadTestSmokeIT {

    private static final Path OUT = Path.of("target", "load-tests-smoke").toAbsolutePath();
    private static final List<Path> KEPT = List.of(Path.of("load-tests", "reports"), Path.of("load-tests", "results"));
    private static final String APT = "apt-get install -y ";
    /**
     * Scenarios whose smoke runs in another test: image-start in {@code ContainerImageIT} (on the image it builds),
     * health-flood's code in {@code HealthFloodIT} (the script wraps that test: no Maven inside Maven).
     */
    private static final Set<String> SMOKED_ELSEWHERE = Set.of("image-start", "health-flood");
    /** Scripts at a time: mostly JVM starts and waits for readiness, so three keep 2 cores busy. */
    private static final int LANES = 3;

    private final Map<String, Future<SmokeRun>> runs = new ConcurrentHashMap<>();
    private ExecutorService lanes;
    private Map<Path, String> keptBefore;
    private Instant started;

    @BeforeAll
    void startAll() throws IOException {
        keptBefore = SmokeRun.snapshot(KEPT);
        // Every scenario's JVMs start from an AOT cache of this build's jar (load-tests/lib/lib.sh): the one the ITs'
        // children use, from the first script on (1.5 instead of 3 CPU-s per start). start-to-ready trains its own
        // (its modes are with and without one) and leaves it in the same place, where the later scenarios take it.
        Files.createDirectories(OUT);
        Path cache = OUT.resolve("app.aot");
        Files.deleteIfExists(cache);
        Optional<Path> trained = ChildAotCache.SERVICE.file();
        if (trained.isPresent()) {
            Path copy = OUT.resolve("app.aot.copy");
            Files.copy(trained.get(), copy, StandardCopyOption.REPLACE_EXISTING);
            Files.move(copy, cache, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        }
        started = Instant.now();
        lanes = Executors.newFixedThreadPool(LANES);
        // Longest first, so the lanes end close together. Each scenario that binds fixed ports gets its own range.
        submit("start-to-ready", List.of(), Map.of(), List.of("wrk", "curl"));
        submit("post-path", List.of(), Map.of(), List.of("wrk", "redis-server", "curl", "postgres"));
        // PostgreSQL with the lifecycle (captures, voids, expiries): every check of the plain soak plus its own.
        submit("fault-soak-lifecycle-postgres", List.of("--store", "postgres", "--lifecycle"), Map.of(),
               List.of("curl", "postgres", "python3-aiohttp"));
        submit("fault-soak-redis", List.of("--store", "redis"), Map.of(),
               List.of("redis-server", "redis-cli", "curl", "postgres", "python3-aiohttp"));
        submit("drain", List.of(), Map.of("LT_BASE_PORT", "18300"), List.of("haproxy", "curl"));
        submit("store-throughput", List.of(), Map.of(), List.of("wrk", "redis-server", "curl", "postgres"));
        // The staging setup: PostgreSQL, each instance and the store in a CPU-limited cgroup (unlimited when not root).
        submit("rolling-restart", List.of(), Map.of("LT_BASE_PORT", "18000"), List.of("haproxy", "curl", "postgres"));
        // JMH on this JVM's own test class path (no Maven inside Maven).
        submit("access-log-line", List.of(), Map.of("LT_TEST_CLASSPATH", System.getProperty("java.class.path")),
               List.of());
    }

    @AfterAll
    void stopAll() {
        if (lanes != null) {
            lanes.shutdownNow();
            System.out.printf("load-test smokes: %d scripts in %.1f s%n", runs.size(),
                              Duration.between(started, Instant.now()).toMillis() / 1000.0);
        }
    }

    @Test
    void theRollingRestartBenchmarkRunsInSmokeMode() throws Exception {
        SmokeRun run = await("rolling-restart");
        // variant | load | rps | s | requests sent > 0 | 2xx > 0
        String report = run.report("rolling-restart.md");
        assertFinds(report, "\\n\\| graceful \\| 100% \\| 50 \\| [0-9]+ \\| [1-9][0-9]* \\| [1-9][0-9]* \\|");
        // on the staging store, with the drain budget staging and prod share
        assertFinds("PostgreSQL as the store", report, "\\*\\*Store `postgres`;");
        assertFinds("staging drain-timeout", report, "`drain-timeout` PT[0-9]+S \\(config/base/base.yaml\\)");
    }

    @Test
    void theDrainBenchmarkRunsInSmokeMode() throws Exception {
        SmokeRun run = await("drain");
        // load | run | rps | in flight at signal | ... | exit status 0 of the drained instance
        assertFinds(run.report("drain.md"),
                "\\n\\| 100% \\| 1 \\| 50 \\| [0-9]+ \\|( [^|]+ \\|){13} 0 \\|");
    }

    @Test
    void theFaultSoakOnRedisRunsInSmokeModeAndEveryInvariantHolds() throws Exception {
        SmokeRun run = await("fault-soak-redis");
        assertFinds(run.report("fault-soak-redis.md"),
                "\\*\\*Result: every invariant holds\\.\\*\\* 20 payments, [1-9][0-9]* requests");
    }

    @Test
    void theLifecycleFaultSoakCapturesAndVoidsInSmokeModeAndEveryInvariantHolds() throws Exception {
        SmokeRun run = await("fault-soak-lifecycle-postgres");
        String report = run.report("fault-soak-lifecycle-postgres.md");
        assertFinds(report, "\\*\\*Result: every invariant holds\\.\\*\\* 20 payments, [1-9][0-9]* requests");
        // captures were made and refused, not only authorizations: the lifecycle really ran
        assertFinds("captures succeeded", report, "\\n\\| capture keys answered SUCCEEDED \\| [1-9][0-9]* \\|");
        assertFinds("no over-capture", report, "\\n\\| over-captures, issuer's ledger: [^|]* \\| 0 \\| 0 \\| ok \\|");
    }

    @Test
    void theStoreThroughputBenchmarkMeasuresEveryStoreIncludingPostgres() throws Exception {
        SmokeRun run = await("store-throughput");
        String report = run.report("store-throughput-*.md");
        for (String backend : List.of("in-memory", "redis \\+ replica, min-replicas-ack 1", "postgres")) {
            // round | backend | requests/s > 0 | relative | p50 | p90 | p99 | max | non-201 0 | socket errors 0
            assertFinds(backend + " measured, every answer a 201", report,
                    "\\n\\| 1 \\| " + backend + " \\| [0-9]*[1-9][0-9]*\\.[0-9] \\|[^\\n]*\\| 0 \\| 0 \\|\\n");
        }
        // round | reference | product SQL one merchant | product SQL many | the service: pgbench ran on the same server
        assertFinds("pgbench's reference and the product's SQL measured after the postgres run", report,
                "\\n\\| 1 \\| [0-9]*[1-9][0-9]*\\.[0-9] \\| [0-9]*[1-9][0-9]*\\.[0-9] \\| [0-9]*[1-9][0-9]*\\.[0-9] \\| "
                + "[0-9]*[1-9][0-9]*\\.[0-9] \\| [0-9.]+ \\|");
    }

    @Test
    void thePostPathBenchmarkRunsInSmokeMode() throws Exception {
        SmokeRun run = await("post-path");
        String report = run.report("post-path-*.md");
        for (String contender : List.of("bare-get", "bare-post", "product", "redis")) {
            assertFinds(contender + " measured", report,
                    "\\n\\| 1 \\| " + contender + " \\| [0-9]*[1-9][0-9]*\\.[0-9] \\|");
        }
        // the primary figure: CPU per request of bare POST over the product's, in the ECS JSON layout of staging/prod
        assertFinds("the CPU ratio", report,
                "\\*\\*Median per-round ratio of CPU per request, bare POST / product POST \\(every request "
                + "access-logged, json\\): [0-9]+\\.[0-9]{2}\\*\\*");
        // the sweeper: idle CPU empty, then holding at least RECORDS (200) records
        assertFinds(report,
                "\\n\\| 0 \\| [0-9.]+ \\|\\n\\| [1-9][0-9]{2,} \\| [0-9.]+ \\|\\n");
    }

    @Test
    void theStartToReadyBenchmarkRunsInSmokeMode() throws Exception {
        SmokeRun run = await("start-to-ready");
        String report = run.report("start-to-ready-*.md");
        for (String mode : List.of("plain", "warm-up", "aot", "aot\\+warm-up")) {
            assertFinds(mode + " started", report,
                    "\\n\\| " + mode + " \\| 1 \\| [1-9][0-9]* \\|[^\\n]*\\| 0 \\|\\n");
        }
    }

    @Test
    void theAccessLogLineBenchmarkRunsInSmokeMode() throws Exception {
        SmokeRun run = await("access-log-line");
        String report = run.report("access-log-line-*.md");
        for (String benchmark : List.of("accessLogLine", "burstOfLines", "formatAndMask", "mask")) {
            // benchmark | measured iterations | request side µs > 0 | ...
            assertFinds(benchmark + " measured", report,
                    "\\n\\| " + benchmark + " \\| 1 \\| (?:[0-9]*[1-9][0-9]*\\.[0-9]+|0\\.[0-9]*[1-9][0-9]*) ");
        }
        assertFinds("the CPU per line against its budget", report,
                "\\*\\*One access-log line: [0-9]+\\.[0-9]{2} µs of CPU\\*\\*");
    }

    /**
     * A scenario added under {@code load-tests/} (a folder with a {@code run.sh}) without a smoke mode, or without a
     * smoke run in CI, fails here: each one is run above, except those whose smoke runs elsewhere in
     * {@code ./mvnw verify} ({@link #SMOKED_ELSEWHERE}).
     *
     * @throws IOException when {@code load-tests/} cannot be read
     */
    @Test
    void everyScenarioUnderLoadTestsHasASmokeModeThatCiRuns() throws IOException {
        Set<String> scenarios = new TreeSet<>();
        try (Stream<Path> dirs = Files.list(Path.of("load-tests"))) {
            dirs.filter(dir -> Files.isRegularFile(dir.resolve("run.sh")))
                    .forEach(dir -> scenarios.add(dir.getFileName().toString()));
        }
        Set<String> smoked = new TreeSet<>(SMOKED_ELSEWHERE);
        runs.keySet().forEach(name -> smoked.add(scenarioOf(name)));
        assertThat("scenarios smoke-run by ./mvnw verify", smoked, is(scenarios));
        for (String scenario : scenarios) {
            // The switch itself, as lib/lib.sh reads it, not a word in a comment.
            String script = Files.readString(Path.of("load-tests", scenario, "run.sh"));
            assertFinds(scenario + "/run.sh has a smoke mode", script, "\\$\\{SMOKE:-0}|\\$LT_SMOKE");
        }
    }

    private static String scenarioOf(String name) {
        return name.startsWith("fault-soak") ? "fault-soak" : name;
    }

    private void submit(String name, List<String> args, Map<String, String> env, List<String> tools) {
        String scenario = scenarioOf(name);
        runs.put(name, lanes.submit(() -> {
            List<String> missing = SmokeRun.missing(tools);
            if (!missing.isEmpty()) {
                return SmokeRun.skipped(name, missing);
            }
            return SmokeRun.run(name, scenario, args, env, OUT.resolve(name), SmokeRun.TIMEOUT);
        }));
    }

    private SmokeRun await(String name) throws InterruptedException, ExecutionException, IOException {
        SmokeRun run = runs.get(name).get();
        if (!run.missing().isEmpty()) {
            Tools.unmet(name + " smoke: " + run.missing() + " not installed; install with: " + APT
                        + String.join(" ", run.missing().stream()
                                .map(tool -> tool.equals("postgres") ? "postgresql" : tool).toList())
                        + " (or run .ci/run)");
        }
        run.assertSucceeded();
        assertNothingWrittenUnderLoadTests();
        return run;
    }

    private static void assertFinds(String what, String report, String regex) {
        SmokeRun.assertFinds(what, report, regex);
    }

    private static void assertFinds(String report, String regex) {
        SmokeRun.assertFinds("report", report, regex);
    }

    private void assertNothingWrittenUnderLoadTests() throws IOException {
        assertThat("load-tests/reports and load-tests/results untouched by smoke runs", SmokeRun.snapshot(KEPT),
                   is(keptBefore));
    }

    /** For {@link SmokeRun#missing}: PostgreSQL's server binaries are not on the PATH on Debian. */
    static boolean postgresInstalled() {
        return PostgresServer.installed();
    }
}
