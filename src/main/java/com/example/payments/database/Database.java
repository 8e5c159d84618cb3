package com.example.payments.database;

import java.lang.System.Logger.Level;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import com.example.payments.config.ConfigurationException;
import com.example.payments.http.RequestMetricsFilter;
import com.example.payments.idempotency.IdempotencyStore.UnavailableException;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.HikariPoolMXBean;
import io.helidon.metrics.api.Counter;
import io.helidon.metrics.api.Gauge;
import io.helidon.metrics.api.MeterRegistry;
import io.helidon.metrics.api.Tag;
import io.helidon.metrics.api.Timer;

/**
 * The PostgreSQL database of the postgres backend: a HikariCP pool whose every call is bounded (pool wait
 * {@code database.connection-timeout}, server-side {@code statement_timeout} and {@code lock_timeout}, and the
 * socket read timeout {@code statement-timeout} + 250 ms), the schema kept by {@link Migrations}, and the pool's and
 * statements' metrics on {@code /metrics}:
 * <ul>
 *     <li>{@code database_pool_connections{state="active"|"idle"|"pending"}} and
 *     {@code database_pool_max_connections} (HikariCP's own counts);</li>
 *     <li>{@code database_statement_duration_seconds{statement}} (histogram, the latency buckets of the HTTP
 *     requests) and {@code database_statement_failures_total{statement}}, per statement: {@code claim},
 *     {@code renew}, {@code record}, {@code release}, {@code find}, {@code sweep}, {@code ping}.</li>
 * </ul>
 * Closed in the cleanup phase of the shutdown (resource {@code database-pool}).
 *
 * <p>Size: the pool, its settings, its migrations and its per-statement metrics share one lifecycle.
 */
public final class Database implements AutoCloseable {

    private static final System.Logger LOGGER = System.getLogger(Database.class.getName());
    // setNetworkTimeout needs an executor only to abort a connection; the driver sets a socket option and ignores it.
    private static final Executor DIRECT = Runnable::run;

    private final DatabaseSettings settings;
    private final HikariDataSource pool;
    private final Migrations migrations;
    private final MeterRegistry meters;
    private final int networkTimeoutMillis;
    private final AtomicLong lastSuccess = new AtomicLong(System.nanoTime() - Duration.ofDays(1).toNanos());
    private final boolean rolledBack;
    private volatile boolean warm;
    private volatile String warmUpFailure;

    private Database(DatabaseSettings settings, HikariDataSource pool, Migrations migrations, MeterRegistry meters,
                     boolean rolledBack) {
        this.settings = settings;
        this.pool = pool;
        this.migrations = migrations;
        this.meters = meters;
        this.rolledBack = rolledBack;
        this.networkTimeoutMillis = (int) settings.networkTimeout().toMillis();
    }

    /**
     * Opens the pool (without waiting for the database) and brings the schema up to date.
     *
     * <p>What happens when the database is not there at startup, and why: a configuration error that no retry can
     * fix (the server refuses the credentials, the database or role does not exist, the role may not create the
     * schema) throws {@link ConfigurationException}, so the process exits 2 naming the key and Kubernetes shows it
     * in the pod's status while the rollout stops with the old pods serving. Anything else (the server unreachable,
     * starting, failing over, a migration failing or waiting for another replica's lock) is what a database does
     * during routine maintenance: the service starts unready ({@code 503} naming {@code database}), retries the
     * migrations in the background and becomes ready without a restart. Exiting instead would crash-loop every pod
     * of a rollout and delay the recovery by the kubelet's back-off (up to 5 minutes) after the database is back.
     *
     * @param settings {@code database.*}
     * @param meters   the service's registry
     * @return the database
     * @throws ConfigurationException when the database refuses the configured credentials or database name
     */
    public static Database open(DatabaseSettings settings, MeterRegistry meters) {
        return open(settings, java.time.Duration.ofDays(7), meters);
    }

    /**
     * {@link #open(DatabaseSettings, MeterRegistry)} with the authorization validity the migrations need: rows
     * written before the lifecycle existed get {@code expires_at = created_at + validity}.
     *
     * @param settings {@code database.*}
     * @param validity {@code authorization.validity}
     * @param meters   the service's registry
     * @return the database
     * @throws ConfigurationException when the database refuses the configured credentials or database name
     */
    public static Database open(DatabaseSettings settings, java.time.Duration validity, MeterRegistry meters) {
        Migrations migrations = Migrations.create(settings, validity);
        Optional<Throwable> failure = migrations.migrate();
        failure.flatMap(Migrations::configurationError).ifPresent(error -> {
            throw error;
        });
        HikariDataSource pool = new HikariDataSource(hikari(settings));
        Database database = new Database(settings, pool, migrations, meters, false);
        database.registerMeters();
        failure.ifPresent(e -> {
            LOGGER.log(Level.WARNING, "Database not ready at startup, retrying in the background (readiness names "
                                      + "database meanwhile): " + Migrations.describe(e));
            migrations.retryInBackground();
        });
        return database;
    }

    private static HikariConfig hikari(DatabaseSettings settings) {
        HikariConfig config = new HikariConfig();
        config.setPoolName("payments-authorization");
        config.setJdbcUrl(settings.url());
        settings.username().ifPresent(config::setUsername);
        settings.password().ifPresent(config::setPassword);
        config.setMaximumPoolSize(settings.poolSize());
        config.setMinimumIdle(settings.poolSize());
        config.setConnectionTimeout(settings.connectionTimeout().toMillis());
        config.setValidationTimeout(250);
        // Start with the database down: the pool keeps trying in the background, calls fail after the pool wait.
        config.setInitializationFailTimeout(-1);
        config.addDataSourceProperty("options", "-c statement_timeout=" + settings.statementTimeout().toMillis()
                                                + " -c lock_timeout=" + settings.lockTimeout().toMillis());
        int connectSeconds = (int) Math.max(1, seconds(settings.connectionTimeout()));
        config.addDataSourceProperty("connectTimeout", String.valueOf(connectSeconds));
        config.addDataSourceProperty("loginTimeout", String.valueOf(connectSeconds));
        // A backstop for the pool's own calls; every call of the service sets its own, finer network timeout.
        config.addDataSourceProperty("socketTimeout", String.valueOf(Math.max(1, seconds(settings.networkTimeout()))));
        config.addDataSourceProperty("tcpKeepAlive", "true");
        config.addDataSourceProperty("ApplicationName", "payments-authorization");
        return config;
    }

    private static long seconds(Duration duration) {
        return (duration.toMillis() + 999) / 1000;
    }

    /**
     * Runs one call with a pooled connection: the wait for the connection and the socket are bounded, the server
     * bounds the statement. Timed in {@code database_statement_duration_seconds{statement}}.
     *
     * @param statement name of the statement for metrics and errors, e.g. {@code claim}
     * @param call      the JDBC work (one statement, or one short transaction it commits itself)
     * @param <T>       result type
     * @return the call's result
     * @throws UnavailableException naming {@code database} when the schema is not migrated yet, no connection came
     *                              within the pool wait, or the statement failed or timed out
     */
    public <T> T call(String statement, SqlCall<T> call) {
        if (!migrations.done()) {
            throw new UnavailableException("database: schema not migrated yet ("
                                           + migrations.lastError().orElse("migrating") + ")", null);
        }
        long start = System.nanoTime();
        try (Connection connection = pool.getConnection()) {
            connection.setNetworkTimeout(DIRECT, networkTimeoutMillis);
            T result = rolledBack ? RolledBackConnection.run(connection, call) : call.run(connection);
            lastSuccess.set(System.nanoTime());
            timer(statement).record(Duration.ofNanos(System.nanoTime() - start));
            return result;
        } catch (SQLException | RuntimeException e) {
            meters.getOrCreate(Counter.builder("database_statement_failures")
                                       .tags(List.of(Tag.create("statement", statement)))
                                       .description("Database calls that failed or timed out, per statement"))
                    .increment();
            if (e instanceof UnavailableException unavailable) {
                throw unavailable;
            }
            throw new UnavailableException("database: " + statement + " failed: " + Migrations.describe(e), e);
        }
    }

    /**
     * Checks the database for readiness: migrated, warmed up ({@link #markWarm}), and a call of the service answered within the timeout, or else
     * one round trip ({@code SELECT 1}) does. Under load the calls of the requests prove the database answers, and
     * the check takes no connection from a busy pool (waiting for one would fail readiness, and feed the circuit
     * breaker, for a replica that is only busy).
     *
     * @param timeout bound of the round trip, and how recent a call's success must be to count
     * @return empty when healthy, else why not (e.g. {@code schema not migrated yet (connection refused)},
     *         {@code warming up (pool 3 of 10 connections)}, {@code warm-up failed: <reason>})
     */
    public Optional<String> check(Duration timeout) {
        if (!migrations.done()) {
            return Optional.of("schema not migrated yet (" + migrations.lastError().orElse("migrating") + ")");
        }
        if (!warm) {
            String failure = warmUpFailure;
            return Optional.of(failure != null ? "warm-up failed: " + failure
                    : "warming up (pool " + poolConnections() + " of " + settings.poolSize() + " connections)");
        }
        if (System.nanoTime() - lastSuccess.get() < timeout.toNanos()) {
            return Optional.empty();
        }
        try (Connection connection = pool.getConnection()) {
            connection.setNetworkTimeout(DIRECT, (int) Math.max(1, timeout.toMillis()));
            try (var statement = connection.createStatement()) {
                statement.execute("SELECT 1");
            }
            lastSuccess.set(System.nanoTime());
            return Optional.empty();
        } catch (SQLException | RuntimeException e) {
            return Optional.of(Migrations.describe(e));
        }
    }

    /**
     * The settings, for the components that size their work by them.
     *
     * @return {@code database.*}
     */
    public DatabaseSettings settings() {
        return settings;
    }

    /**
     * Whether the schema is up to date (the store answers 503 until it is).
     *
     * @return {@code true} once the migrations ran
     */
    public boolean migrated() {
        return migrations.done();
    }

    /**
     * A view of this database for the startup warm-up: the same pool and schema, but every call runs in a transaction
     * that is rolled back (it writes nothing; a commit is refused), and its statements are timed in {@code meters}
     * instead of the service's registry. Closing the view closes nothing.
     *
     * @param quiet the registry of the view's statement metrics (the warm-up's, which counts nothing)
     * @return the view
     */
    public Database rolledBackView(MeterRegistry quiet) {
        return new Database(settings, pool, migrations, quiet, true);
    }

    /**
     * Connections the pool holds open (idle and in use); the pool opens them in the background, up to
     * {@code database.pool-size}.
     *
     * @return 0 to {@code database.pool-size}
     */
    public int poolConnections() {
        HikariPoolMXBean bean = pool.getHikariPoolMXBean();
        return bean == null ? 0 : bean.getTotalConnections();
    }

    /**
     * Marks the warm-up on this database done: from now on readiness depends on the round trip alone. Until then,
     * once the schema is migrated, {@link #check} answers {@code warming up (pool n of m connections)}.
     */
    public void markWarm() {
        warm = true;
    }

    /**
     * Records that the warm-up on this database failed (no sandbox request through the store was answered as
     * expected): until {@link #markWarm}, {@link #check} answers {@code warm-up failed: <reason>}.
     *
     * @param reason why, e.g. {@code 0 of 56 sandbox requests through the store answered as expected (status 503)}
     */
    public void markWarmUpFailed(String reason) {
        warmUpFailure = reason;
    }

    /**
     * Whether {@link #close()} ran.
     *
     * @return {@code true} once the pool is closed
     */
    public boolean closed() {
        return pool.isClosed();
    }

    /** Stops the background migrations (if still retrying) and closes the pool's connections. */
    @Override
    public void close() {
        if (rolledBack) {
            return;
        }
        migrations.close();
        pool.close();
    }

    private Timer timer(String statement) {
        return meters.getOrCreate(Timer.builder("database_statement_duration")
                                          .baseUnit(TimeUnit.SECONDS)
                                          .tags(List.of(Tag.create("statement", statement)))
                                          .description("Database call duration, pool wait included, per statement")
                                          .percentiles(new double[0])
                                          .buckets(RequestMetricsFilter.latencyBuckets()));
    }

    private void registerMeters() {
        for (String state : new String[] {"active", "idle", "pending"}) {
            meters.getOrCreate(Gauge.builder("database_pool_connections", this, db -> db.connections(state))
                                       .tags(List.of(Tag.create("state", state)))
                                       .description("Connections of the database pool, by state (pending: callers "
                                                    + "waiting for one)"));
        }
        meters.getOrCreate(Gauge.builder("database_pool_max_connections", this, db -> db.settings.poolSize())
                                   .description("database.pool-size"));
    }

    private int connections(String state) {
        HikariPoolMXBean bean = pool.getHikariPoolMXBean();
        if (bean == null) {
            return 0;
        }
        return switch (state) {
        case "active" -> bean.getActiveConnections();
        case "idle" -> bean.getIdleConnections();
        default -> bean.getThreadsAwaitingConnection();
        };
    }

    /**
     * JDBC work on a borrowed connection.
     *
     * @param <T> result type
     */
    @FunctionalInterface
    public interface SqlCall<T> {

        /**
         * Runs the work.
         *
         * @param connection a pooled connection in auto-commit mode; return it in that mode
         * @return the result
         * @throws SQLException from the driver
         */
        T run(Connection connection) throws SQLException;
    }
}
