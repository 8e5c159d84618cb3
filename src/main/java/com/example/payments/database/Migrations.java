package com.example.payments.database;

import java.lang.System.Logger.Level;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;

import com.example.payments.config.ConfigurationException;

import org.flywaydb.core.Flyway;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * The schema of the postgres backend, kept by Flyway from the versioned SQL files in
 * {@code src/main/resources/db/migration} ({@code V1__...sql}; an applied file is never edited, a change is a new
 * version). Every replica runs the migrations at startup; Flyway's advisory lock lets one of them apply each version
 * while the others wait, and a version already applied is skipped. A replica whose schema is already current does
 * not block on them: one query of Flyway's history table, and Flyway is not even loaded ({@link SchemaVersions}).
 *
 * <p>Migrations run on their own connection, not the pool's: a schema change may take longer than
 * {@code database.statement-timeout} (they get 5 minutes per statement, and wait at most 10 s for a lock held by a
 * running request). Until they succeed, {@link #done()} is {@code false}: the store answers 503 and readiness names
 * {@code database}; a failed attempt is retried in the background every 1 s, backing off to 10 s.
 */
final class Migrations implements AutoCloseable {

    private static final System.Logger LOGGER = System.getLogger(Migrations.class.getName());
    private static final Duration FIRST_RETRY = Duration.ofSeconds(1);
    private static final Duration LAST_RETRY = Duration.ofSeconds(10);

    private final PGSimpleDataSource source;
    private final Duration validity;
    private final AtomicReference<String> lastError = new AtomicReference<>();
    private volatile boolean done;
    private volatile Thread retrying;
    private Flyway flyway;

    private Migrations(PGSimpleDataSource source, Duration validity) {
        this.source = source;
        this.validity = validity;
    }

    static Migrations create(DatabaseSettings settings, Duration validity) {
        PGSimpleDataSource source = new PGSimpleDataSource();
        source.setURL(settings.url());
        settings.username().ifPresent(source::setUser);
        settings.password().ifPresent(source::setPassword);
        source.setConnectTimeout(2);
        source.setLoginTimeout(5);
        source.setSocketTimeout(330);
        source.setOptions("-c statement_timeout=300000 -c lock_timeout=10000");
        source.setApplicationName("payments-authorization-migrations");
        return new Migrations(source, validity);
    }

    // Built on the first attempt that needs it: a replica whose schema is current never loads Flyway.
    private synchronized Flyway flyway() {
        if (flyway == null) {
            flyway = Flyway.configure()
                    .dataSource(source)
                    .locations("classpath:db/migration")
                    .placeholders(java.util.Map.of("validity_ms", Long.toString(validity.toMillis())))
                    // Another replica migrating holds Flyway's lock: give up after ~10 s and retry later, so that
                    // this thread never waits for it unbounded.
                    .lockRetryCount(10)
                    .load();
        }
        return flyway;
    }

    /**
     * One attempt: when the schema is already current ({@link SchemaVersions}: every shipped version applied with the
     * shipped file's checksum, none failed), one query and done; otherwise Flyway's migrate (which also validates the
     * applied files' checksums, and refuses an edited one).
     *
     * @return empty on success, else the failure
     */
    Optional<Throwable> migrate() {
        try (Connection connection = source.getConnection()) {
            if (SchemaVersions.current(connection, SchemaVersions.shipped())) {
                done = true;
                lastError.set(null);
                return Optional.empty();
            }
        } catch (SQLException e) {
            if (!SchemaVersions.UNDEFINED_TABLE.equals(e.getSQLState())) {
                lastError.set(describe(e));
                return Optional.of(e);
            }
        }
        try {
            var result = flyway().migrate();
            done = true;
            lastError.set(null);
            if (result.migrationsExecuted > 0) {
                LOGGER.log(Level.INFO, "Database schema migrated to version " + result.targetSchemaVersion + " ("
                                       + result.migrationsExecuted + " migration(s) applied)");
            }
            return Optional.empty();
        } catch (RuntimeException e) {
            lastError.set(describe(e));
            return Optional.of(e);
        }
    }

    /** Retries {@link #migrate()} on a daemon thread until it succeeds or {@link #close()} is called. */
    void retryInBackground() {
        Thread thread = Thread.ofPlatform().daemon().name("database-migrations").unstarted(() -> {
            Duration pause = FIRST_RETRY;
            while (!done && !Thread.currentThread().isInterrupted()) {
                try {
                    Thread.sleep(pause);
                } catch (InterruptedException e) {
                    return;
                }
                Optional<Throwable> failure = migrate();
                if (failure.isEmpty()) {
                    LOGGER.log(Level.INFO, "Database reachable and schema up to date: ready from now on");
                    return;
                }
                configurationError(failure.get()).ifPresent(error -> LOGGER.log(Level.ERROR, error.getMessage()));
                pause = pause.multipliedBy(2).compareTo(LAST_RETRY) > 0 ? LAST_RETRY : pause.multipliedBy(2);
            }
        });
        retrying = thread;
        thread.start();
    }

    boolean done() {
        return done;
    }

    Optional<String> lastError() {
        return Optional.ofNullable(lastError.get());
    }

    @Override
    public void close() {
        Thread thread = retrying;
        if (thread != null) {
            thread.interrupt();
        }
    }

    /**
     * A failure no retry can fix, as the configuration error it is: the server refused the credentials (SQLSTATE
     * class 28), the database does not exist (3D000), or the role may not create the schema (42501).
     *
     * @param failure what the driver or Flyway threw
     * @return the error naming the key, or empty for anything worth retrying
     */
    static Optional<ConfigurationException> configurationError(Throwable failure) {
        String state = sqlState(failure).orElse("");
        if (state.equals("28P01")) {
            return Optional.of(new ConfigurationException("database.password", "the database refused the password "
                    + "of database.username (SQLSTATE 28P01); allowed: the role's password, from the Secret "
                    + "(DATABASE_PASSWORD)"));
        }
        if (state.startsWith("28")) {
            return Optional.of(new ConfigurationException("database.username", "the database refused the role (SQLSTATE "
                    + state + ": " + firstLine(failure) + "); allowed: a role that exists and may log in from here"));
        }
        if (state.equals("3D000")) {
            return Optional.of(new ConfigurationException("database.url", "the database named in the URL does not "
                    + "exist (SQLSTATE 3D000); allowed: jdbc:postgresql://host[:port]/<an existing database>"));
        }
        if (state.equals("42501")) {
            return Optional.of(new ConfigurationException("database.username", "the role may not create the schema "
                    + "(SQLSTATE 42501: " + firstLine(failure) + "); allowed: a role owning the database's schema"));
        }
        return Optional.empty();
    }

    /**
     * One line describing a database failure, without values from the statement.
     *
     * @param failure what the driver, the pool or Flyway threw
     * @return e.g. {@code SQLSTATE 08001: Connection to 127.0.0.1:5432 refused}
     */
    static String describe(Throwable failure) {
        Optional<String> state = sqlState(failure);
        return state.map(s -> "SQLSTATE " + s + ": ").orElse("") + firstLine(failure);
    }

    private static Optional<String> sqlState(Throwable failure) {
        for (Throwable e = failure; e != null; e = e.getCause()) {
            if (e instanceof SQLException sql && sql.getSQLState() != null) {
                return Optional.of(sql.getSQLState());
            }
        }
        return Optional.empty();
    }

    private static String firstLine(Throwable failure) {
        Throwable deepest = failure;
        for (Throwable e = failure; e != null; e = e.getCause()) {
            if (e instanceof SQLException) {
                deepest = e;
                break;
            }
            deepest = e;
        }
        String message = deepest.getMessage() == null ? deepest.getClass().getSimpleName() : deepest.getMessage();
        String line = message.strip().split("\\R", 2)[0];
        return line.length() > 200 ? line.substring(0, 200) + "..." : line;
    }
}
