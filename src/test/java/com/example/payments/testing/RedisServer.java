package com.example.payments.testing;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;


/**
 * A private {@code redis-server} for one test class: its own free port on 127.0.0.1, no persistence, its own working
 * directory. Never touches a Redis someone else started (the shared one on 6379 included) and stops only its own
 * process.
 *
 * <p>Without {@code redis-server} on the PATH a test is skipped with a message saying how to install it; with
 * {@code CI=true} it fails instead ({@link Tools#require}).
 */
public final class RedisServer implements AutoCloseable {

    private final int port;
    private final boolean tls;
    private final List<String> extraArgs;
    private final Path dir;
    private final List<String> output = new CopyOnWriteArrayList<>();
    private volatile Process process;

    private Leftovers.Handle tracked;

    private RedisServer(int port, boolean tls, List<String> extraArgs, Path dir) {
        this.port = port;
        this.tls = tls;
        this.extraArgs = List.copyOf(extraArgs);
        this.dir = dir;
    }

    /**
     * Skips the calling test when {@code redis-server} is missing, or fails it under {@code CI=true} (see
     * {@link Tools#require}).
     */
    public static void assumeInstalled() {
        Tools.require("redis-server", "apt-get install redis-server");
    }

    /**
     * Whether {@code redis-server} is on the PATH.
     *
     * @return {@code true} when it is
     */
    public static boolean installed() {
        return Tools.onPath("redis-server");
    }

    /**
     * Starts a server on a free port.
     *
     * @param extraArgs more {@code redis-server} arguments, e.g. {@code "--replicaof", "127.0.0.1", "6390"}
     * @return the running server
     * @throws IOException when it does not start within 10 s
     */
    public static RedisServer start(String... extraArgs) throws IOException {
        return start(false, List.of(extraArgs));
    }

    /**
     * Starts a server that accepts TLS only ({@code rediss://}), on a free port.
     *
     * @param certificates server certificate, key and CA
     * @param extraArgs    more {@code redis-server} arguments, e.g. ACL users
     * @return the running server
     * @throws IOException when it does not start within 10 s
     */
    public static RedisServer startTls(TestCertificates certificates, String... extraArgs) throws IOException {
        List<String> args = new ArrayList<>(List.of("--tls-cert-file", certificates.certificate().toString(),
                "--tls-key-file", certificates.key().toString(), "--tls-ca-cert-file", certificates.ca().toString(),
                "--tls-auth-clients", "no"));
        args.addAll(List.of(extraArgs));
        return start(true, args);
    }

    private static RedisServer start(boolean tls, List<String> extraArgs) throws IOException {
        assumeInstalled();
        Path dir = Files.createTempDirectory("redis-test-");
        IOException failure = null;
        // The free port may be taken by someone else before redis-server binds it: try another one.
        for (int attempt = 0; attempt < 3; attempt++) {
            RedisServer server = new RedisServer(freePort(), tls, extraArgs, dir);
            try {
                server.launch();
                server.tracked = Leftovers.track("redis-server on port " + server.port, server::release);
                return server;
            } catch (IOException e) {
                failure = e;
            }
        }
        throw failure;
    }

    /**
     * Starts a replica of this server and waits until its first synchronization finished.
     *
     * @return the replica
     * @throws IOException when it does not start or sync within 10 s
     */
    public RedisServer startReplica() throws IOException {
        RedisServer replica = start("--replicaof", "127.0.0.1", String.valueOf(port));
        try {
            replica.awaitLine("sync: Finished with success", Duration.ofSeconds(10));
            awaitAcknowledgedWrite(Duration.ofSeconds(10));
            return replica;
        } catch (IOException e) {
            replica.close();
            throw e;
        }
    }

    // After a full sync the primary streams writes to a new replica only from the replica's first acknowledgement,
    // which comes with its once-a-second cron: until then WAIT cannot succeed. Wait until one write is acknowledged.
    private void awaitAcknowledgedWrite(Duration timeout) throws IOException {
        RedisClient client = RedisClient.create(uri());
        try (StatefulRedisConnection<String, String> connection = client.connect()) {
            long deadline = System.nanoTime() + timeout.toNanos();
            while (System.nanoTime() < deadline) {
                connection.sync().set("redis-server-fixture:probe", "1");
                if (connection.sync().waitForReplication(1, 200) >= 1) {
                    return;
                }
            }
            throw new IOException("The replica of " + uri() + " acknowledged no write within " + timeout);
        } finally {
            client.shutdown();
        }
    }

    /**
     * The port.
     *
     * @return port on 127.0.0.1
     */
    public int port() {
        return port;
    }

    /**
     * The URI the service is configured with.
     *
     * @return {@code redis://127.0.0.1:<port>}, or {@code rediss://} when the server speaks TLS
     */
    public String uri() {
        return (tls ? "rediss" : "redis") + "://127.0.0.1:" + port;
    }

    /**
     * Stops the server (SIGTERM, then SIGKILL after 5 s); its data is gone (nothing is persisted).
     */
    public void stop() {
        Process current = process;
        if (current == null || !current.isAlive()) {
            return;
        }
        try {
            // A paused server would not act on SIGTERM.
            signal("CONT");
        } catch (IOException e) {
            // destroyForcibly below still ends it
        }
        current.destroy();
        try {
            if (!current.waitFor(5, TimeUnit.SECONDS)) {
                current.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Freezes the server (SIGSTOP): connections stay open but nothing answers, like a hung host or a network partition.
     *
     * @throws IOException when {@code kill} fails
     */
    public void pause() throws IOException {
        signal("STOP");
    }

    /**
     * Thaws a paused server (SIGCONT).
     *
     * @throws IOException when {@code kill} fails
     */
    public void resume() throws IOException {
        signal("CONT");
    }

    private void signal(String signal) throws IOException {
        try {
            Process kill = new ProcessBuilder("kill", "-" + signal, String.valueOf(process.pid())).inheritIO().start();
            if (kill.waitFor() != 0) {
                throw new IOException("kill -" + signal + " failed");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(e);
        }
    }

    /**
     * Starts the server again on the same port and with the same arguments, empty like a Redis that restarted.
     *
     * @throws IOException when it does not start within 10 s
     */
    public void restart() throws IOException {
        stop();
        output.clear();
        launch();
    }

    /**
     * Output so far, for failure messages.
     *
     * @return log lines
     */
    public List<String> output() {
        return List.copyOf(output);
    }

    /** Stops the server and deletes its working directory. */
    @Override
    public void close() {
        if (tracked != null) {
            tracked.close();
        }
        release();
    }

    private void release() {
        stop();
        try (var files = Files.walk(dir)) {
            files.sorted(java.util.Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        } catch (IOException e) {
            // a temp directory left behind
        }
    }

    private void launch() throws IOException {
        List<String> listen = tls ? List.of("--port", "0", "--tls-port", String.valueOf(port))
                : List.of("--port", String.valueOf(port));
        List<String> command = new ArrayList<>(List.of("redis-server"));
        command.addAll(listen);
        command.addAll(List.of(
                "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir.toString(),
                "--maxmemory-policy", "noeviction",
                // A replica gets its first sync at once instead of after the default 5 s wait for more replicas.
                "--repl-diskless-sync-delay", "0"));
        command.addAll(extraArgs);
        process = new ProcessBuilder(command).redirectErrorStream(true).start();
        Process started = process;
        Thread.ofPlatform().daemon(true).name("redis-" + port).start(() -> pump(started));
        awaitLine("Ready to accept connections", Duration.ofSeconds(10));
    }

    private void awaitLine(String text, Duration timeout) throws IOException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            if (output.stream().anyMatch(line -> line.contains(text))) {
                return;
            }
            if (!process.isAlive()) {
                break;
            }
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException(e);
            }
        }
        stop();
        throw new IOException("redis-server on port " + port + " did not log '" + text + "':\n"
                              + String.join("\n", output));
    }

    private void pump(Process source) {
        try (BufferedReader reader = new BufferedReader(new InputStreamReader(source.getInputStream(),
                                                                              StandardCharsets.UTF_8))) {
            String line;
            while ((line = reader.readLine()) != null) {
                output.add(line);
            }
        } catch (IOException e) {
            // the server ended
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }
}
