package com.example.payments.loadtests;

import java.io.IOException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.PathMatcher;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import com.example.payments.testing.Leftovers;
import com.example.payments.testing.Tools;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.empty;
import static org.hamcrest.Matchers.hasSize;
import static org.hamcrest.Matchers.is;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * One smoke run of a load-test scenario: {@code bash load-tests/<scenario>/run.sh} with {@code SMOKE=1} and
 * {@code LT_OUT} set to a directory of its own, its output in {@code <LT_OUT>/run.log}, bounded by a timeout. Every
 * process the script starts is recorded while it runs (its descendants, sampled every 100 ms); whatever of them is
 * still alive a few seconds after the script ended is killed and reported as leaked.
 *
 * @param name     what the run is called in messages, e.g. {@code fault-soak-postgres}
 * @param out      its {@code LT_OUT}: {@code results/}, {@code reports/} and {@code run.log}
 * @param exit     the script's exit status, or -1 when it was stopped at the timeout
 * @param elapsed  wall-clock time, launch to exit
 * @param leaked   processes it started that outlived it (killed since), as {@code pid command}
 * @param missing  tools this machine lacks (the run did not happen when not empty)
 */
public record SmokeRun(String name, Path out, int exit, Duration elapsed, List<String> leaked, List<String> missing) {

    /** Per script, also on a busy 2-core machine; a smoke run takes 5-30 s on a quiet one. */
    public static final Duration TIMEOUT = Duration.ofMinutes(6);
    /** How long the script gets after SIGTERM (its traps stop what it started) before everything is killed. */
    private static final Duration GRACE = Duration.ofSeconds(20);
    /** How long a process the script started may outlive it (a JVM finishing its shutdown after SIGKILL's reaping). */
    private static final Duration LINGER = Duration.ofSeconds(5);

    /**
     * Runs a scenario in smoke mode.
     *
     * @param name     the run's name
     * @param scenario folder under {@code load-tests/}
     * @param args     arguments of {@code run.sh}
     * @param env      variables added to {@code SMOKE=1}, {@code LT_OUT} and {@code JAVA_HOME}
     * @param out      {@code LT_OUT}, emptied first
     * @param timeout  after it, SIGTERM; {@link #GRACE} later, SIGKILL to the script and everything it started
     * @return the finished run
     * @throws IOException          when the script cannot be started
     * @throws InterruptedException when interrupted while waiting for it
     */
    public static SmokeRun run(String name, String scenario, List<String> args, Map<String, String> env, Path out,
                        Duration timeout) throws IOException, InterruptedException {
        delete(out);
        Files.createDirectories(out);
        List<String> command = new ArrayList<>(List.of("bash", "load-tests/" + scenario + "/run.sh"));
        command.addAll(args);
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(out.resolve("run.log").toFile());
        builder.environment().put("SMOKE", "1");
        builder.environment().put("LT_OUT", out.toString());
        builder.environment().putIfAbsent("JAVA_HOME", System.getProperty("java.home"));
        builder.environment().putAll(env);
        Instant start = Instant.now();
        Process process = builder.start();
        Map<Long, ProcessHandle> started = new HashMap<>();
        long deadline = System.nanoTime() + timeout.toNanos();
        // Killed with everything it started if the test JVM ends first (an interrupted or crashed test class).
        try (Leftovers.Handle tracked = Leftovers.track("load-test smoke run " + name, () -> {
            process.descendants().forEach(ProcessHandle::destroyForcibly);
            process.destroyForcibly();
        })) {
            while (!process.waitFor(100, TimeUnit.MILLISECONDS)) {
                process.descendants().forEach(p -> started.putIfAbsent(p.pid(), p));
                if (System.nanoTime() > deadline) {
                    process.destroy();   // SIGTERM: the script's traps stop what it started
                    if (!process.waitFor(GRACE.toMillis(), TimeUnit.MILLISECONDS)) {
                        process.descendants().forEach(ProcessHandle::destroyForcibly);
                        process.destroyForcibly().waitFor();
                    }
                    break;
                }
            }
        }
        Duration elapsed = Duration.between(start, Instant.now());
        int exit = System.nanoTime() > deadline ? -1 : process.exitValue();
        System.out.printf("load-test smoke %s: exit %d after %.1f s%n", name, exit, elapsed.toMillis() / 1000.0);
        return new SmokeRun(name, out, exit, elapsed, leaked(started.values()), List.of());
    }

    /**
     * A run that did not happen: this machine lacks tools.
     *
     * @param name    the run's name
     * @param missing the tools
     * @return the run, with {@link #missing()} set
     */
    static SmokeRun skipped(String name, List<String> missing) {
        return new SmokeRun(name, null, 0, Duration.ZERO, List.of(), missing);
    }

    /**
     * The tools of a list this machine lacks; {@code postgres} stands for PostgreSQL's server binaries, a
     * {@code python3-} name for that Debian package's module in {@code /usr/bin/python3}.
     *
     * @param tools executable names, or {@code python3-<module>}
     * @return the missing ones, in order
     */
    public static List<String> missing(List<String> tools) {
        List<String> missing = new ArrayList<>();
        if (!Files.isExecutable(Path.of("/usr/bin/python3"))) {
            missing.add("python3");
        }
        for (String tool : tools) {
            boolean present = tool.equals("postgres") ? LoadTestSmokeIT.postgresInstalled()
                    : tool.startsWith("python3-") ? pythonImports(tool.substring("python3-".length()))
                    : Tools.onPath(tool);
            if (!present) {
                missing.add(tool);
            }
        }
        return missing;
    }

    private static boolean pythonImports(String module) {
        try {
            Process python = new ProcessBuilder("/usr/bin/python3", "-c", "import " + module)
                    .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            return python.waitFor() == 0;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /**
     * Asserts that the script exited 0 within its timeout and left no process behind; the message has the end of its
     * log.
     *
     * @throws IOException when the log cannot be read
     */
    public void assertSucceeded() throws IOException {
        assertThat(name + " smoke exit status (-1: stopped at the timeout); its log ends:\n" + tail(), exit, is(0));
        assertThat(name + " smoke left processes running (killed now)", leaked, is(empty()));
    }

    /**
     * The report the run wrote.
     *
     * @param glob its file name under {@code reports/}, e.g. {@code store-throughput-*.md}
     * @return its text
     * @throws IOException when it cannot be read
     */
    public String report(String glob) throws IOException {
        PathMatcher matcher = FileSystems.getDefault().getPathMatcher("glob:" + glob);
        List<Path> reports;
        try (Stream<Path> files = Files.list(out.resolve("reports"))) {
            reports = files.filter(f -> matcher.matches(f.getFileName())).toList();
        }
        assertThat(name + " smoke wrote one report " + glob + " under " + out.resolve("reports"), reports, hasSize(1));
        return Files.readString(reports.getFirst());
    }

    /**
     * What is under some directories: every file with its size and modification time.
     *
     * @param dirs directories (missing ones count as empty)
     * @return path to {@code size@mtime}
     * @throws IOException when a directory cannot be read
     */
    static Map<Path, String> snapshot(List<Path> dirs) throws IOException {
        Map<Path, String> files = new TreeMap<>();
        for (Path dir : dirs) {
            if (!Files.isDirectory(dir)) {
                continue;
            }
            try (Stream<Path> paths = Files.walk(dir)) {
                for (Path path : (Iterable<Path>) paths::iterator) {
                    files.put(path, Files.isDirectory(path) ? "dir"
                            : Files.size(path) + "@" + Files.getLastModifiedTime(path));
                }
            }
        }
        return files;
    }

    /**
     * Asserts that a report has a match of a regular expression (searched, not matched whole).
     *
     * @param what   what the match proves, for the message
     * @param report the report's text
     * @param regex  e.g. a table row with a non-zero number
     */
    public static void assertFinds(String what, String report, String regex) {
        assertTrue(Pattern.compile(regex).matcher(report).find(),
                   () -> what + ": no match for " + regex + " in:\n" + report);
    }

    private String tail() throws IOException {
        Path log = out.resolve("run.log");
        if (!Files.exists(log)) {
            return "(no log)";
        }
        List<String> lines = Files.readAllLines(log);
        return String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
    }

    // Whatever the script started that is still alive LINGER after it ended: killed, and named.
    private static List<String> leaked(Iterable<ProcessHandle> started) throws InterruptedException {
        Map<Long, String> alive = new LinkedHashMap<>();
        long until = System.nanoTime() + LINGER.toNanos();
        do {
            alive.clear();
            for (ProcessHandle p : started) {
                if (Leftovers.running(p)) {
                    alive.put(p.pid(), p.info().commandLine().or(() -> p.info().command()).orElse("?"));
                }
            }
            if (alive.isEmpty()) {
                return List.of();
            }
            Thread.sleep(200);
        } while (System.nanoTime() < until);
        List<String> leaked = new ArrayList<>();
        for (ProcessHandle p : started) {
            if (Leftovers.running(p)) {
                leaked.add(p.pid() + " " + Optional.ofNullable(alive.get(p.pid())).orElse("?"));
                p.destroyForcibly();
            }
        }
        return leaked;
    }

    private static void delete(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path path : paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.delete(path);
            }
        }
    }
}
