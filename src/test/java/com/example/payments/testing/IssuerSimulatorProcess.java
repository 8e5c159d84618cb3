package com.example.payments.testing;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.example.payments.http.Json;
import com.example.payments.issuer.IssuerStats;

/**
 * The issuer simulator ({@code com.example.payments.issuer.IssuerSimulator}) running from the built jars (the service's
 * and the test-tools jar: {@link BuiltJar#testToolsClassPath()}) as a child JVM on a free port, for tests and soaks
 * that need a real issuer process: one simulator shared by several service replicas ({@code authorizer.type=http},
 * {@code authorizer.http.uri=}{@link #uri()}), its counters read from {@code GET /stats} and {@code GET /metrics}, real
 * signals ({@code STOP} makes it hang, {@code KILL} makes it dead).
 *
 * <pre>
 * try (IssuerSimulatorProcess issuer = IssuerSimulatorProcess.start(Map.of())) {
 *     ServiceProcess.start(Map.of("authorizer.type", "http", "authorizer.http.uri", issuer.uri()));
 *     ...
 *     assertThat(issuer.stats().paymentsApprovedMoreThanOnce(), is(0L));
 * }
 * </pre>
 */
public final class IssuerSimulatorProcess implements AutoCloseable {

    private static final String MAIN_CLASS = "com.example.payments.issuer.IssuerSimulator";
    private static final Pattern LISTENING = Pattern.compile("Issuer simulator listening on port (\\d+)");

    private final Process process;
    private final List<String> output = new CopyOnWriteArrayList<>();
    private volatile int port = -1;
    private final Leftovers.Handle tracked;

    private IssuerSimulatorProcess(Process process) {
        this.process = process;
        this.tracked = Leftovers.track("issuer simulator pid " + process.pid(), this::kill);
        process.onExit().thenRun(() -> tracked.close());
        Thread.ofPlatform().daemon(true).name("issuer-simulator-output").start(this::pump);
    }

    /**
     * Starts the simulator and waits until it listens.
     *
     * @param properties {@code issuer.*} system properties, e.g. {@code issuer.simulated-latency=PT2S};
     *                   {@code issuer.port} defaults to 0 (a free port)
     * @return the running simulator
     * @throws IOException when the JVM cannot be launched or does not listen within 60 s
     */
    public static IssuerSimulatorProcess start(Map<String, String> properties) throws IOException {
        return start(command(properties, ChildAotCache.ISSUER_SIMULATOR.options()));
    }

    /**
     * Starts the training run of the simulator's AOT cache ({@link ChildAotCache#ISSUER_SIMULATOR}): the simulator as
     * every test runs it, writing the cache to {@code output} when it exits.
     *
     * @param output where the cache goes
     * @return the running simulator
     * @throws IOException when it does not listen within 60 s
     */
    static IssuerSimulatorProcess startTraining(Path output) throws IOException {
        return start(command(Map.of(), ChildAotCache.trainingOptions(output)));
    }

    private static IssuerSimulatorProcess start(List<String> command) throws IOException {
        IssuerSimulatorProcess issuer = new IssuerSimulatorProcess(
                new ProcessBuilder(command).redirectErrorStream(true).start());
        issuer.awaitListening(Duration.ofSeconds(60));
        return issuer;
    }

    /**
     * Runs the simulator expecting it to refuse to start (a configuration mistake).
     *
     * @param properties {@code issuer.*} system properties
     * @return exit status and output lines
     * @throws Exception when it does not exit within 60 s
     */
    public static ServiceProcess.Exited runToExit(Map<String, String> properties) throws Exception {
        Path log = Files.createTempFile("issuer-simulator-", ".log");
        try {
            Process process = new ProcessBuilder(command(properties, ChildAotCache.ISSUER_SIMULATOR.options()))
                    .redirectErrorStream(true)
                    .redirectOutput(log.toFile()).start();
            if (!process.waitFor(60, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new IllegalStateException("Issuer simulator did not exit: " + Files.readString(log));
            }
            return new ServiceProcess.Exited(process.exitValue(), Files.readAllLines(log));
        } finally {
            Files.deleteIfExists(log);
        }
    }

    // C1 only and the serial collector, as the service's children (ServiceProcess): a simulator lives for seconds.
    private static List<String> command(Map<String, String> properties, List<String> aotCache) {
        List<String> command = new ArrayList<>(List.of(ProcessHandle.current().info().command().orElse("java"),
                                                       "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"));
        command.addAll(aotCache);
        command.add("-Dissuer.port=" + properties.getOrDefault("issuer.port", "0"));
        properties.forEach((key, value) -> {
            if (!key.equals("issuer.port")) {
                command.add("-D" + key + "=" + value);
            }
        });
        // The service's jar (its manifest Class-Path brings target/libs) and the test-tools jar holding the simulator.
        command.addAll(List.of("-cp", BuiltJar.testToolsClassPath(), MAIN_CLASS));
        return command;
    }

    /**
     * The base URI to configure as {@code authorizer.http.uri}.
     *
     * @return {@code http://127.0.0.1:<port>}
     */
    public String uri() {
        return "http://127.0.0.1:" + port;
    }

    /**
     * The port it listens on.
     *
     * @return port on 127.0.0.1
     */
    public int port() {
        return port;
    }

    /**
     * Reads {@code GET /stats}: the JSON fields of {@link IssuerStats}.
     *
     * @return the counters now
     * @throws IOException          when the simulator does not answer 200
     * @throws InterruptedException when interrupted
     */
    public IssuerStats stats() throws IOException, InterruptedException {
        var response = Http.get(uri() + "/stats");
        if (response.statusCode() != 200) {
            throw new IOException("GET /stats answered " + response.statusCode() + ": " + response.body());
        }
        return Json.mapper().readValue(response.body(), IssuerStats.class);
    }

    /**
     * Waits until the counters satisfy a condition, e.g. that a held call was decided after {@code SIGCONT}.
     *
     * @param condition what to wait for
     * @param timeout   how long
     * @return the counters that satisfied it
     * @throws Exception when they do not within the timeout
     */
    public IssuerStats awaitStats(Predicate<IssuerStats> condition, Duration timeout) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        IssuerStats last = stats();
        while (!condition.test(last)) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("Issuer stats not as expected within " + timeout + ": " + last);
            }
            Thread.sleep(20);
            last = stats();
        }
        return last;
    }

    /**
     * Scrapes {@code GET /metrics}.
     *
     * @return the parsed scrape ({@code issuer_*} series)
     * @throws IOException          on connection failure
     * @throws InterruptedException when interrupted
     */
    public MetricsScrape metrics() throws IOException, InterruptedException {
        return MetricsScrape.parse(Http.get(uri() + "/metrics").body());
    }

    /**
     * Sends a real signal: {@code STOP} makes every call hang (connections are still accepted by the kernel),
     * {@code CONT} resumes it, {@code KILL} makes it dead (connections refused).
     *
     * @param signal signal name without {@code SIG}
     * @throws Exception when {@code kill} fails
     */
    public void signal(String signal) throws Exception {
        Process kill = new ProcessBuilder("kill", "-" + signal, String.valueOf(process.pid())).inheritIO().start();
        if (kill.waitFor() != 0) {
            throw new IllegalStateException("kill -" + signal + " failed");
        }
        if (signal.equals("KILL")) {
            process.waitFor(10, TimeUnit.SECONDS);
        }
    }

    /**
     * Waits for the simulator to exit.
     *
     * @param timeout how long to wait
     * @return its exit status, or -1 when it is still running
     * @throws InterruptedException when interrupted
     */
    public int awaitExit(Duration timeout) throws InterruptedException {
        return process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS) ? process.exitValue() : -1;
    }

    /**
     * The OS process id.
     *
     * @return pid
     */
    public long pid() {
        return process.pid();
    }

    /**
     * Output lines so far (stdout and stderr merged), e.g. to check that no card number was logged.
     *
     * @return snapshot
     */
    public List<String> output() {
        return List.copyOf(output);
    }

    private void awaitListening(Duration timeout) throws IOException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (port <= 0) {
            if (!process.isAlive() || System.nanoTime() > deadline) {
                process.destroyForcibly();
                throw new IOException("Issuer simulator did not start within " + timeout + ":\n"
                                      + String.join("\n", output));
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException(e);
            }
        }
    }

    private void pump() {
        try (BufferedReader reader = new BufferedReader(new InputStreamReader(process.getInputStream(),
                                                                              StandardCharsets.UTF_8))) {
            for (String line = reader.readLine(); line != null; line = reader.readLine()) {
                output.add(line);
                Matcher listening = LISTENING.matcher(line);
                if (listening.find()) {
                    port = Integer.parseInt(listening.group(1));
                }
            }
        } catch (IOException e) {
            // process ended
        }
    }

    /** Resumes (if stopped) and kills the simulator, so no test leaves a JVM behind. */
    @Override
    public void close() {
        tracked.close();
        kill();
    }

    private void kill() {
        if (!process.isAlive()) {
            return;
        }
        try {
            signal("CONT");
        } catch (Exception e) {
            // destroyForcibly below still ends it
        }
        // A training run's exit assembles its AOT cache in a JVM of its own (ChildAotCache): that one goes too.
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
        try {
            process.waitFor(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
