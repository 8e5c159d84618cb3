package com.example.payments.testing;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.UserPrincipalLookupService;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A private PostgreSQL server for one test class, from Debian's packages ({@code /usr/lib/postgresql/<version>/bin}):
 * a fresh cluster in a temporary directory (a copy of the build's {@code initdb}-made template,
 * {@link PostgresTemplate}), {@code pg_ctl} on a free port of 127.0.0.1, its socket in that directory, trust
 * authentication on loopback, {@code fsync} off. Never touches a server someone else started (the
 * shared one on 5432 included); stops only its own.
 *
 * <p>{@code initdb} refuses to run as root: as root, the server runs as the {@code postgres} user the package
 * creates ({@code runuser -u postgres}). Without the binaries a test is skipped naming
 * {@code apt-get install postgresql}; with {@code CI=true} it fails instead ({@link Tools#unmet}).
 */
public final class PostgresServer implements AutoCloseable {

    /** The database the service is configured with. */
    public static final String DATABASE = "payments";
    /** The superuser role {@code initdb} creates. */
    public static final String USER = "postgres";

    private final Path bin;
    private final Path dir;
    private final int port;

    private Leftovers.Handle tracked;

    private PostgresServer(Path bin, Path dir, int port) {
        this.bin = bin;
        this.dir = dir;
        this.port = port;
    }

    /**
     * Where {@code initdb} and {@code pg_ctl} are: the newest {@code /usr/lib/postgresql/<version>/bin}, or the PATH.
     *
     * @return the directory, empty when PostgreSQL is not installed
     */
    public static Optional<Path> binaries() {
        Path debian = Path.of("/usr/lib/postgresql");
        if (Files.isDirectory(debian)) {
            try (Stream<Path> versions = Files.list(debian)) {
                Optional<Path> newest = versions.map(v -> v.resolve("bin"))
                        .filter(b -> Files.isExecutable(b.resolve("initdb")) && Files.isExecutable(b.resolve("pg_ctl")))
                        .max(Comparator.comparing(b -> Integer.parseInt(b.getParent().getFileName().toString()
                                                                                .replaceAll("\\D", "0"))));
                if (newest.isPresent()) {
                    return newest;
                }
            } catch (IOException | NumberFormatException e) {
                // fall back to the PATH
            }
        }
        return Tools.find("initdb").filter(initdb -> Files.isExecutable(initdb.resolveSibling("pg_ctl")))
                .map(Path::getParent);
    }

    /**
     * Whether the PostgreSQL server binaries are installed.
     *
     * @return {@code true} when they are
     */
    public static boolean installed() {
        return binaries().isPresent();
    }

    /** Skips the calling test when PostgreSQL is missing, or fails it under {@code CI=true}. */
    public static void assumeInstalled() {
        if (!installed()) {
            Tools.unmet("PostgreSQL (initdb, pg_ctl) is not installed; install it with: apt-get install postgresql "
                        + "(or run .ci/run)");
        }
    }

    /**
     * Creates a fresh cluster (a copy of the template) and starts it on a free port, with the database {@link #DATABASE}.
     *
     * @return the running server
     * @throws IOException when it does not start within 60 s
     */
    public static PostgresServer start() throws IOException {
        assumeInstalled();
        Path bin = binaries().orElseThrow();
        Path dir = Files.createTempDirectory("postgres-test-");
        if (root()) {
            UserPrincipalLookupService users = dir.getFileSystem().getUserPrincipalLookupService();
            Files.setOwner(dir, users.lookupPrincipalByName(USER));
        }
        try {
            PostgresTemplate.copyTo(bin, dir.resolve("data"));
        } catch (IOException e) {
            new PostgresServer(bin, dir, 0).release();
            throw e;
        }
        IOException failure = null;
        for (int attempt = 0; attempt < 3; attempt++) {
            PostgresServer server = new PostgresServer(bin, dir, freePort());
            try {
                server.launch();
                server.execute("postgres", "CREATE DATABASE " + DATABASE);
                server.tracked = Leftovers.track("postgres on port " + server.port, server::release);
                return server;
            } catch (IOException e) {
                failure = e;
                server.stopQuietly();
            }
        }
        // Nobody will close a server that never started: its cluster directory goes now.
        new PostgresServer(bin, dir, 0).release();
        throw failure;
    }

    /**
     * The URL the service is configured with ({@code database.url}).
     *
     * @return {@code jdbc:postgresql://127.0.0.1:<port>/payments}
     */
    public String url() {
        return url(DATABASE);
    }

    /**
     * The URL of another database of this server.
     *
     * @param database its name
     * @return {@code jdbc:postgresql://127.0.0.1:<port>/<database>}
     */
    public String url(String database) {
        return "jdbc:postgresql://127.0.0.1:" + port + "/" + database;
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
     * Opens a connection to {@link #DATABASE} as the superuser (for assertions: counting rows, reading tables).
     *
     * @return a new connection; close it
     * @throws SQLException when the server does not answer
     */
    public Connection connect() throws SQLException {
        return DriverManager.getConnection(url(), USER, "");
    }

    /**
     * Runs one statement in a database of this server.
     *
     * @param database its name
     * @param sql      the statement
     * @throws IOException when it fails
     */
    public void execute(String database, String sql) throws IOException {
        try (Connection connection = DriverManager.getConnection(url(database), USER, "");
             Statement statement = connection.createStatement()) {
            statement.execute(sql);
        } catch (SQLException e) {
            throw new IOException(sql + ": " + e.getMessage(), e);
        }
    }

    /**
     * The process id of the postmaster, from its {@code postmaster.pid}.
     *
     * @return pid
     * @throws IOException when the server is not running
     */
    public long postmasterPid() throws IOException {
        return Long.parseLong(Files.readAllLines(dir.resolve("data/postmaster.pid"), StandardCharsets.UTF_8)
                                      .get(0).strip());
    }

    /**
     * Kills the postmaster with SIGKILL, like a crashed database host: no shutdown, connections reset. Its backends
     * notice and exit on their own.
     *
     * @throws IOException when {@code kill} fails
     */
    public void kill() throws IOException {
        run(Duration.ofSeconds(10), List.of("kill", "-KILL", String.valueOf(postmasterPid())));
    }

    /**
     * Starts the server again on the same port with its data (after {@link #kill()} or {@link #stop()}); crash
     * recovery replays its WAL. Retries while the backends of a killed postmaster are still exiting.
     *
     * @throws IOException when it does not start within 60 s
     */
    public void restart() throws IOException {
        IOException failure = null;
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (System.nanoTime() < deadline) {
            try {
                Files.deleteIfExists(dir.resolve("data/postmaster.pid"));
                launch();
                return;
            } catch (IOException e) {
                failure = e;
                try {
                    Thread.sleep(500);
                } catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                    throw new IOException(interrupted);
                }
            }
        }
        throw failure;
    }

    /**
     * Stops the server at once ({@code pg_ctl stop -m immediate}).
     *
     * @throws IOException when {@code pg_ctl} fails
     */
    public void stop() throws IOException {
        run(Duration.ofSeconds(60), asServerUser(bin.resolve("pg_ctl").toString(), "-D", dir.resolve("data").toString(),
                                                 "-m", "immediate", "-w", "stop"));
    }

    /** Stops the server and deletes its directory. */
    @Override
    public void close() {
        if (tracked != null) {
            tracked.close();
        }
        release();
    }

    private void release() {
        stopQuietly();
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        } catch (IOException e) {
            // a temp directory left behind
        }
    }

    /**
     * The server's log, for failure messages.
     *
     * @return its lines so far
     */
    public String log() {
        try {
            return Files.readString(dir.resolve("postgres.log"));
        } catch (IOException e) {
            return "(no log: " + e.getMessage() + ")";
        }
    }

    private void stopQuietly() {
        try {
            if (Files.exists(dir.resolve("data/postmaster.pid"))) {
                stop();
            }
        } catch (IOException e) {
            // already gone
        }
    }

    private void launch() throws IOException {
        String options = "-p " + port + " -k " + dir + " -c listen_addresses=127.0.0.1 -c fsync=off "
                         + "-c max_connections=200 -c full_page_writes=off";
        run(Duration.ofSeconds(60), asServerUser(bin.resolve("pg_ctl").toString(), "-D", dir.resolve("data").toString(),
                "-o", options, "-l", dir.resolve("postgres.log").toString(), "-w", "-t", "50", "start"));
    }

    static List<String> asServerUser(String... command) {
        List<String> full = new ArrayList<>();
        if (root()) {
            full.addAll(List.of("runuser", "-u", USER, "--"));
        }
        full.addAll(List.of(command));
        return full;
    }

    static boolean root() {
        return "root".equals(System.getProperty("user.name"));
    }

    static void run(Duration timeout, List<String> command) throws IOException {
        // Output to a file: a server started by pg_ctl may keep a pipe open long after pg_ctl exited.
        Path output = Files.createTempFile("postgres-command-", ".log");
        try {
            Process process = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(output.toFile()).start();
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly();
                throw new IOException(String.join(" ", command) + " did not finish within " + timeout);
            }
            if (process.exitValue() != 0) {
                throw new IOException(String.join(" ", command) + " exited " + process.exitValue() + ": "
                                      + Files.readString(output));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(e);
        } finally {
            Files.deleteIfExists(output);
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }
}
