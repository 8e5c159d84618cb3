package com.example.payments.database;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import com.example.payments.observability.LatencyBuckets;
import com.example.payments.idempotency.IdempotencyStore.UnavailableException;
import com.example.payments.idempotency.Uninterruptible;

import io.helidon.metrics.api.Counter;
import io.helidon.metrics.api.MeterRegistry;
import io.helidon.metrics.api.Tag;
import io.helidon.metrics.api.Timer;

/**
 * Runs work on the connections of a {@link DatabasePool} for {@link Database}: each call where an interrupt of the
 * caller cannot break it ({@link Uninterruptible}), with the socket bounded ({@code statement-timeout} + 250 ms),
 * timed in {@code database_statement_duration_seconds{statement}}, and its failure counted in
 * {@code database_statement_failures_total{statement}} and turned into an {@link UnavailableException} naming
 * {@code database}; in the warm-up's view each call is rolled back ({@link RolledBackConnection}). It remembers when
 * a call last succeeded, so that readiness needs no round trip of its own under load.
 */
final class DatabaseCalls {

    // setNetworkTimeout needs an executor only to abort a connection; the driver sets a socket option and ignores it.
    private static final Executor DIRECT = Runnable::run;

    private final DatabasePool pool;
    private final MeterRegistry meters;
    private final int networkTimeoutMillis;
    private final AtomicLong lastSuccess = new AtomicLong(System.nanoTime() - Duration.ofDays(1).toNanos());
    private final boolean rolledBack;

    /**
     * Creates the runner.
     *
     * @param pool       the pool
     * @param settings   {@code database.*}: {@code networkTimeout()} bounds each call's socket
     * @param meters     the registry of the statement metrics
     * @param rolledBack whether each call runs in a transaction that is rolled back (the warm-up's view)
     */
    DatabaseCalls(DatabasePool pool, DatabaseSettings settings, MeterRegistry meters, boolean rolledBack) {
        this.pool = pool;
        this.meters = meters;
        this.rolledBack = rolledBack;
        this.networkTimeoutMillis = (int) settings.networkTimeout().toMillis();
    }

    /**
     * Runs one call with a pooled connection ({@link Database#call}, once the schema is migrated).
     *
     * @param statement name of the statement for metrics and errors, e.g. {@code claim}
     * @param call      the JDBC work
     * @param <T>       result type
     * @return the call's result
     * @throws UnavailableException naming {@code database} when no connection came within the pool wait, or the
     *                              statement failed or timed out
     */
    <T> T call(String statement, Database.SqlCall<T> call) {
        // An interrupt (the end of the drain cutting a request off) would close the connection's socket mid-statement:
        // a decided authorization would go unrecorded. The call runs where no interrupt reaches it.
        return Uninterruptible.call(() -> callHere(statement, call));
    }

    private <T> T callHere(String statement, Database.SqlCall<T> call) {
        long start = System.nanoTime();
        try (Connection connection = pool.connection()) {
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
     * The round trip of the readiness check ({@link Database#check}): none when a call succeeded within the timeout,
     * else {@code SELECT 1}.
     *
     * @param timeout bound of the round trip, and how recent a call's success must be to count
     * @return empty when the database answered, else why not
     */
    Optional<String> roundTrip(Duration timeout) {
        if (System.nanoTime() - lastSuccess.get() < timeout.toNanos()) {
            return Optional.empty();
        }
        try (Connection connection = pool.connection()) {
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

    private Timer timer(String statement) {
        return meters.getOrCreate(Timer.builder("database_statement_duration")
                                          .baseUnit(TimeUnit.SECONDS)
                                          .tags(List.of(Tag.create("statement", statement)))
                                          .description("Database call duration, pool wait included, per statement")
                                          .percentiles(new double[0])
                                          .buckets(LatencyBuckets.bounds()));
    }
}
