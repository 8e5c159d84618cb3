package com.example.payments.database;

import java.lang.System.Logger.Level;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Optional;

import com.example.payments.config.ConfigurationException;
import com.example.payments.idempotency.IdempotencyStore.UnavailableException;
import com.example.payments.observability.LatencyBuckets;

import io.helidon.metrics.api.MeterRegistry;

/**
 * The PostgreSQL database of the postgres backend: a HikariCP pool ({@link DatabasePool}) whose every call is
 * bounded (pool wait {@code database.connection-timeout}, server-side {@code statement_timeout} and
 * {@code lock_timeout}, and the socket read timeout {@code statement-timeout} + 250 ms), the schema kept by
 * {@link Migrations}, and the pool's and statements' metrics on {@code /metrics}:
 * <ul>
 *     <li>{@code database_pool_connections{state="active"|"idle"|"pending"}} and
 *     {@code database_pool_max_connections} (HikariCP's own counts);</li>
 *     <li>{@code database_statement_duration_seconds{statement}} (histogram, the latency buckets of the HTTP
 *     requests) and {@code database_statement_failures_total{statement}}, per statement: {@code claim},
 *     {@code renew}, {@code record}, {@code release}, {@code find}, {@code sweep}, {@code ping}.</li>
 * </ul>
 * Closed in the cleanup phase of the shutdown (resource {@code database-pool}).
 *
 * <p>This class is the database's lifecycle and state (open, migrated, warm, ready, closed); the pool's configuration
 * and gauges are {@link DatabasePool}'s, running a call and its statement metrics {@link DatabaseCalls}'.
 */
public final class Database implements AutoCloseable {

    private static final System.Logger LOGGER = System.getLogger(Database.class.getName());

    private final DatabaseSettings settings;
    private final DatabasePool pool;
    private final Migrations migrations;
    private final DatabaseCalls calls;
    private final boolean rolledBack;
    private volatile boolean warm;
    private volatile String warmUpFailure;

    private Database(DatabaseSettings settings, DatabasePool pool, Migrations migrations, MeterRegistry meters,
                     boolean rolledBack) {
        this.settings = settings;
        this.pool = pool;
        this.migrations = migrations;
        this.calls = new DatabaseCalls(pool, settings, meters, rolledBack);
        this.rolledBack = rolledBack;
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
        DatabasePool pool = DatabasePool.open(settings, meters);
        Database database = new Database(settings, pool, migrations, meters, false);
        failure.ifPresent(e -> {
            LOGGER.log(Level.WARNING, "Database not ready at startup, retrying in the background (readiness names "
                                      + "database meanwhile): " + Migrations.describe(e));
            migrations.retryInBackground();
        });
        return database;
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
        return calls.call(statement, call);
    }

    /**
     * Checks the database for readiness: migrated, warmed up ({@link #markWarm}), and a call of the service answered
     * within the timeout, or else one round trip ({@code SELECT 1}) does. Under load the calls of the requests prove
     * the database answers, and the check takes no connection from a busy pool (waiting for one would fail readiness,
     * and feed the circuit breaker, for a replica that is only busy).
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
        return calls.roundTrip(timeout);
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
        return pool.totalConnections();
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
        return pool.closed();
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
