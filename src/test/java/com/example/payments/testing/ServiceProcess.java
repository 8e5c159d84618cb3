package com.example.payments.testing;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The built service ({@link BuiltJar}) running as a child JVM, for tests that need a real
 * process: real signals, real exit codes, real logs. It accepts the test configuration's API keys
 * ({@link TestCredentials}) unless the test configures keys ({@code auth.api-keys}) or a config file itself. Ports are chosen by the OS (port 0) and read from the startup
 * log line. Captures stdout and stderr line by line with the time each line arrived.
 */
public final class ServiceProcess implements AutoCloseable {

    private static final String MAIN_CLASS = "com.example.payments.Main";
    private static final String NAIVE_MAIN_CLASS = "com.example.payments.NaiveShutdownMain";
    private static final Pattern STARTED = Pattern.compile(
            "serving business traffic on port (\\d+), health probes and metrics on port (\\d+)");
    // Logged right before the business listener closes its port (graceful drain, or the naive contender's stop).
    private static final Pattern BUSINESS_CLOSING = Pattern.compile(
            "business listener stops accepting|stopping both listeners now");

    /**
     * One line of the child's output.
     *
     * @param nanos {@link System#nanoTime()} when this process read it (a few ms after the child wrote it)
     * @param text  the line
     */
    public record Line(long nanos, String text) {
    }

    private final Process process;
    private final List<Line> output = new CopyOnWriteArrayList<>();
    private volatile int businessPort = -1;
    private volatile int healthPort = -1;
    private volatile boolean businessClosing;
    private volatile OpenApiContract.Registration contract;
    private final Leftovers.Handle tracked;
    private final Thread pump;

    private ServiceProcess(Process process) {
        this.process = process;
        this.tracked = Leftovers.track("service process pid " + process.pid(), this::kill);
        // Every stop path ends here, whoever stopped it (a signal, a crash, close()): the port is free from now on.
        process.onExit().thenRun(() -> {
            forgetBusinessListener();
            tracked.close();
        });
        this.pump = Thread.ofPlatform().daemon(true).name("child-output").start(this::pump);
    }

    /**
     * Starts the service with extra system properties and waits until both listeners are bound.
     *
     * @param properties system properties, e.g. {@code shutdown.pre-drain-delay=PT2S}; ports default to 0
     * @param env        extra environment variables
     * @return the running process
     * @throws IOException when the JVM cannot be launched or does not start within 60 s
     */
    public static ServiceProcess start(Map<String, String> properties, Map<String, String> env) throws IOException {
        return start(properties, env, jar(), 0, false);
    }

    /**
     * Starts the service on one CPU, as a pod with a CPU limit of 1 would run it: the JVM pinned to CPU 0
     * ({@code taskset -c 0}) and told it has one processor ({@code -XX:ActiveProcessorCount=1}, so the virtual thread
     * scheduler has one carrier thread and the JIT one compiler thread of each kind).
     *
     * @param properties system properties; ports default to 0
     * @return the running process
     * @throws IOException when it does not start within 30 s
     */
    public static ServiceProcess startOnOneCpu(Map<String, String> properties) throws IOException {
        return start(properties, Map.of(), jar(), 0, true);
    }

    /**
     * Starts the service with a file descriptor limit, as {@code bash -c 'ulimit -n LIMIT; exec java ...'} would: the
     * JVM (the same process id) can hold at most that many open files and sockets.
     *
     * @param properties system properties; ports default to 0
     * @param fileLimit  {@code ulimit -n} of the service
     * @return the running process
     * @throws IOException when it does not start within 60 s
     */
    public static ServiceProcess startWithFileLimit(Map<String, String> properties, int fileLimit) throws IOException {
        return start(properties, Map.of(), jar(), fileLimit, false);
    }

    /**
     * Starts the service with {@code target/test-classes} on the class path as well, so that test-only providers
     * (e.g. a {@code ShutdownResource} registered in {@code src/test/resources/META-INF/services}) are found.
     * Launched as {@code java -cp target/<jar>:target/libs/*:target/test-classes Main} instead
     * of {@code java -jar}; everything else is the same.
     *
     * @param properties system properties; ports default to 0
     * @return the running process
     * @throws IOException when the JVM cannot be launched or does not start within 60 s
     */
    public static ServiceProcess startWithTestClasses(Map<String, String> properties) throws IOException {
        return start(properties, Map.of(), List.of("-cp", String.join(File.pathSeparator, BuiltJar.path().toString(),
                Path.of("target", "libs", "*").toString(), Path.of("target", "test-classes").toString()), MAIN_CLASS),
                     0, false);
    }

    /**
     * Starts the AOT cache's training run ({@link ChildAotCache}): the jar as every child runs it, writing the cache
     * to {@code output} when it exits.
     *
     * @param output where the cache goes
     * @return the running process
     * @throws IOException when it does not start within 60 s
     */
    static ServiceProcess startTraining(Path output) throws IOException {
        return start(Map.of(), Map.of(), jar(), 0, false, ChildAotCache.trainingOptions(output));
    }

    /**
     * Starts the load tests' naive-shutdown contender ({@code com.example.payments.NaiveShutdownMain}, from the
     * test-tools jar): the same service, which stops both listeners at once at SIGTERM.
     *
     * @param properties system properties; ports default to 0
     * @return the running process
     * @throws IOException when the JVM cannot be launched or does not start within 60 s
     */
    public static ServiceProcess startNaive(Map<String, String> properties) throws IOException {
        return start(properties, Map.of(), List.of("-cp", BuiltJar.testToolsClassPath(), NAIVE_MAIN_CLASS), 0, false);
    }

    // What runs the service, after the JVM options: the jar itself, or a class path and a main class.
    private static List<String> jar() {
        return List.of("-jar", BuiltJar.path().toString());
    }

    private static ServiceProcess start(Map<String, String> properties, Map<String, String> env, List<String> launch,
                                        int fileLimit, boolean oneCpu) throws IOException {
        // The cache was trained on the jar alone: on another class path the JVM would refuse it.
        return start(properties, env, launch, fileLimit, oneCpu,
                     "-jar".equals(launch.get(0)) ? ChildAotCache.SERVICE.options() : List.of());
    }

    private static ServiceProcess start(Map<String, String> properties, Map<String, String> env, List<String> launch,
                                        int fileLimit, boolean oneCpu, List<String> aotCache) throws IOException {
        List<String> command = new ArrayList<>();
        if (oneCpu) {
            command.addAll(List.of("taskset", "-c", "0"));
        }
        command.add(javaBinary());
        if (oneCpu) {
            command.add("-XX:ActiveProcessorCount=1");
        }
        command.addAll(testDefaults(properties, env));
        command.addAll(aotCache);
        command.add("-Dserver.port=" + properties.getOrDefault("server.port", "0"));
        command.add("-Dhealth-server.port=" + properties.getOrDefault("health-server.port", "0"));
        withTestKeys(properties, env).forEach((key, value) -> {
            if (!key.endsWith(".port")) {
                command.add("-D" + key + "=" + value);
            }
        });
        command.addAll(launch);
        return launch(withFileLimit(command, fileLimit), env, Duration.ofSeconds(60));
    }

    /**
     * Starts any command that runs the service and prints its startup line (e.g. {@code scripts/run-image.sh}, which
     * runs the container image), and waits until both listeners are bound.
     *
     * @param command        the command and its arguments
     * @param env            extra environment variables of the command
     * @param startupTimeout how long to wait for the startup line
     * @return the running process; {@link #pid()} and {@link #signal(String)} address the command itself
     * @throws IOException when the command cannot be launched, exits, or does not start within the timeout
     */
    public static ServiceProcess launch(List<String> command, Map<String, String> env, Duration startupTimeout)
            throws IOException {
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        builder.environment().remove("APP_CONFIG_FILE");
        builder.environment().putAll(env);
        ServiceProcess service = new ServiceProcess(builder.start());
        service.awaitStarted(startupTimeout);
        return service;
    }

    // The test configuration's API keys and fingerprint secret, unless the test configures them (as properties or in
    // the environment) or gives its own config file.
    private static Map<String, String> withTestKeys(Map<String, String> properties, Map<String, String> env) {
        if (env.containsKey("APP_CONFIG_FILE")) {
            return properties;
        }
        Map<String, String> withKeys = new LinkedHashMap<>();
        TestCredentials.config().forEach((key, value) -> {
            String envName = key.toUpperCase(Locale.ROOT).replace('.', '_').replace('-', '_');
            if (!properties.containsKey(key) && !env.containsKey(envName)) {
                withKeys.put(key, value);
            }
        });
        withKeys.putAll(properties);
        return withKeys;
    }

    // What every child JVM of the tests gets unless the test says otherwise: no warm-up (up to warm-up.timeout, 3 s
    // of CPU, before every start; WarmUpTest and the warm-up's own tests set warm-up.* themselves), C1 only (a
    // child lives for seconds: C2 would spend its CPU compiling code the test never runs long enough to use) and the
    // serial collector (a heap of tens of MB: G1's threads and regions cost a start 0.1 CPU-s more). The service under
    // test is the same jar and the same configuration otherwise (the image's G1 is ContainerImageIT's).
    private static List<String> testDefaults(Map<String, String> properties, Map<String, String> env) {
        List<String> defaults = new ArrayList<>(List.of("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"));
        boolean warmUpSet = properties.keySet().stream().anyMatch(key -> key.startsWith("warm-up."))
                            || env.keySet().stream().anyMatch(name -> name.startsWith("WARM_UP_"));
        if (!warmUpSet) {
            defaults.add("-Dwarm-up.requests=0");
        }
        return defaults;
    }

    // exec keeps the process id, so signals and waitFor reach the JVM itself.
    private static List<String> withFileLimit(List<String> command, int fileLimit) {
        if (fileLimit <= 0) {
            return command;
        }
        List<String> limited = new ArrayList<>(List.of("bash", "-c", "ulimit -n " + fileLimit + " && exec \"$@\"",
                                                       "bash"));
        limited.addAll(command);
        return limited;
    }

    /**
     * Starts the service with extra system properties.
     *
     * @param properties system properties
     * @return the running process
     * @throws IOException when it does not start
     */
    public static ServiceProcess start(Map<String, String> properties) throws IOException {
        return start(properties, Map.of());
    }

    /**
     * Runs the jar expecting it to refuse to start, and returns its exit status and output.
     *
     * @param properties system properties
     * @param env        extra environment variables
     * @return exit status and output lines
     * @throws Exception when it does not exit within 60 s
     */
    public static Exited runToExit(Map<String, String> properties, Map<String, String> env) throws Exception {
        return runToExit(properties, env, 0);
    }

    /**
     * Runs the jar with a file descriptor limit ({@code ulimit -n}), expecting it to refuse to start.
     *
     * @param properties system properties
     * @param env        extra environment variables
     * @param fileLimit  {@code ulimit -n}, or 0 for none
     * @return exit status and output lines
     * @throws Exception when it does not exit within 60 s
     */
    public static Exited runToExit(Map<String, String> properties, Map<String, String> env, int fileLimit)
            throws Exception {
        ServiceProcess service;
        List<String> command = new ArrayList<>(List.of(javaBinary()));
        command.addAll(testDefaults(properties, env));
        command.addAll(ChildAotCache.SERVICE.options());
        withTestKeys(properties, env).forEach((key, value) -> command.add("-D" + key + "=" + value));
        command.addAll(List.of("-jar", BuiltJar.path().toString()));
        ProcessBuilder builder = new ProcessBuilder(withFileLimit(command, fileLimit)).redirectErrorStream(true);
        builder.environment().remove("APP_CONFIG_FILE");
        builder.environment().putAll(env);
        service = new ServiceProcess(builder.start());
        if (!service.process.waitFor(60, TimeUnit.SECONDS)) {
            service.process.destroyForcibly();
            throw new IllegalStateException("Service did not exit: " + service.output());
        }
        // The pump reads to the end of the output, which the exit closed: closing the stream under it lost lines.
        service.pump.join(5000);
        return new Exited(service.process.exitValue(), service.output());
    }

    /**
     * Exit status and output of a process that ended.
     *
     * @param status exit status
     * @param output output lines
     */
    public record Exited(int status, List<String> output) {
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
     * Business listener port.
     *
     * @return port
     */
    public int businessPort() {
        return businessPort;
    }

    /**
     * Health listener port.
     *
     * @return port
     */
    public int healthPort() {
        return healthPort;
    }

    /**
     * Sends a real signal with {@code kill}.
     *
     * @param signal e.g. {@code TERM}, {@code INT}, {@code KILL}
     * @throws Exception when kill fails
     */
    public void signal(String signal) throws Exception {
        Process kill = new ProcessBuilder("kill", "-" + signal, String.valueOf(process.pid())).inheritIO().start();
        if (kill.waitFor() != 0) {
            throw new IllegalStateException("kill -" + signal + " failed");
        }
    }

    /**
     * Waits for the process to exit.
     *
     * @param timeout how long
     * @return the exit status
     * @throws Exception when it is still running after the timeout
     */
    public int awaitExit(Duration timeout) throws Exception {
        if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new IllegalStateException("Service still running after " + timeout + "; output:\n"
                                            + String.join("\n", output()));
        }
        // The last lines may still be in the pipe: read it to its end.
        pump.join(Duration.ofSeconds(5));
        return process.exitValue();
    }

    /**
     * Waits until {@code /health/ready} answers 200: startup is complete (the first loopback probe succeeded).
     *
     * @param timeout how long
     * @throws Exception when it does not within the timeout
     */
    public void awaitReady(Duration timeout) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        String last = "no answer";
        while (System.nanoTime() < deadline) {
            try {
                var response = Http.get("http://127.0.0.1:" + healthPort + "/health/ready");
                if (response.statusCode() == 200) {
                    return;
                }
                last = response.statusCode() + " " + response.body();
            } catch (IOException e) {
                last = e.toString();
            }
            Thread.sleep(20);
        }
        throw new IllegalStateException("Not ready within " + timeout + ", last answer " + last + "; output:\n"
                                        + String.join("\n", output()));
    }

    /**
     * Whether the process is running.
     *
     * @return {@code true} while alive
     */
    public boolean alive() {
        return process.isAlive();
    }

    /**
     * Output lines so far (stdout and stderr merged).
     *
     * @return snapshot
     */
    public List<String> output() {
        return output.stream().map(Line::text).toList();
    }

    /**
     * Output lines so far with the time each arrived, for timelines.
     *
     * @return snapshot
     */
    public List<Line> lines() {
        return List.copyOf(output);
    }

    /**
     * Waits for an output line.
     *
     * @param match   the line to wait for
     * @param timeout how long
     * @return the first matching line
     * @throws InterruptedException when interrupted
     */
    public String awaitLine(Predicate<String> match, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            for (Line line : output) {
                if (match.test(line.text())) {
                    return line.text();
                }
            }
            Thread.sleep(20);
        }
        throw new IllegalStateException("No matching line within " + timeout + "; output:\n"
                                        + String.join("\n", output()));
    }

    private void awaitStarted(Duration timeout) throws IOException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            if (businessPort > 0) {
                return;
            }
            if (!process.isAlive()) {
                close();
                throw new IOException("Service exited with " + process.exitValue() + ":\n" + String.join("\n", output()));
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException(e);
            }
        }
        // Nobody gets this object to close: stop it now, so it leaves nothing behind.
        close();
        throw new IOException("Service did not start within " + timeout + ":\n" + String.join("\n", output()));
    }

    private void pump() {
        try (BufferedReader reader = new BufferedReader(new InputStreamReader(process.getInputStream(),
                                                                              StandardCharsets.UTF_8))) {
            String line;
            while ((line = reader.readLine()) != null) {
                output.add(new Line(System.nanoTime(), line));
                Matcher matcher = STARTED.matcher(line);
                if (matcher.find()) {
                    healthPort = Integer.parseInt(matcher.group(2));
                    int port = Integer.parseInt(matcher.group(1));
                    contract = OpenApiContract.businessListener(port, () -> process.isAlive() && !businessClosing);
                    businessPort = port;
                } else if (BUSINESS_CLOSING.matcher(line).find()) {
                    forgetBusinessListener();
                }
            }
        } catch (IOException e) {
            // process ended
        }
    }

    private static String javaBinary() {
        return ProcessHandle.current().info().command().orElse("java");
    }

    private void forgetBusinessListener() {
        businessClosing = true;
        OpenApiContract.Registration registered = contract;
        if (registered != null) {
            registered.close();
        }
    }

    /** Kills the process if it is still running (SIGKILL), so no test leaves a JVM behind. */
    @Override
    public void close() {
        tracked.close();
        kill();
    }

    private void kill() {
        forgetBusinessListener();
        // Its children too, found while it lives (an orphan is no longer its descendant): a JVM that writes an AOT
        // cache at exit starts a JVM of its own to assemble it (ChildAotCache's training run).
        List<ProcessHandle> children = process.descendants().toList();
        if (process.isAlive()) {
            process.destroyForcibly();
            try {
                process.waitFor(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        children.forEach(ProcessHandle::destroyForcibly);
    }
}
