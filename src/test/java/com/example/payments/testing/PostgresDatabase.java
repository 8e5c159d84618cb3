package com.example.payments.testing;

import java.io.IOException;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Optional;

import com.example.payments.database.Database;
import com.example.payments.database.DatabaseSettings;

import io.helidon.metrics.api.MetricsFactory;
import io.helidon.service.registry.Services;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A test class's private PostgreSQL with the service's pool ({@link Database}) open on it: registered as a
 * static field with {@code @RegisterExtension}, it starts both before the class's first test when PostgreSQL is
 * installed, skips each test when it is not (fails it under {@code CI=true}), and closes both after the last test.
 */
public final class PostgresDatabase implements BeforeAllCallback, BeforeEachCallback, AfterAllCallback {

    private final int poolSize;
    private final Duration statementTimeout;
    private final Duration lockTimeout;
    private final Duration connectionTimeout;
    private PostgresServer server;
    private Database database;

    private PostgresDatabase(int poolSize, Duration statementTimeout, Duration lockTimeout,
                             Duration connectionTimeout) {
        this.poolSize = poolSize;
        this.statementTimeout = statementTimeout;
        this.lockTimeout = lockTimeout;
        this.connectionTimeout = connectionTimeout;
    }

    /**
     * A fixture whose pool has these bounds (see {@link DatabaseSettings}).
     *
     * @param poolSize          connections
     * @param statementTimeout  {@code database.statement-timeout}
     * @param lockTimeout       {@code database.lock-timeout}
     * @param connectionTimeout {@code database.connection-timeout}
     * @return the fixture, started by JUnit
     */
    public static PostgresDatabase withPool(int poolSize, Duration statementTimeout, Duration lockTimeout,
                                            Duration connectionTimeout) {
        return new PostgresDatabase(poolSize, statementTimeout, lockTimeout, connectionTimeout);
    }

    /**
     * Settings for a pool on a test's server, as the superuser, without a password.
     *
     * @param server            the test's server
     * @param poolSize          connections
     * @param statementTimeout  {@code database.statement-timeout}
     * @param lockTimeout       {@code database.lock-timeout}
     * @param connectionTimeout {@code database.connection-timeout}
     * @return the settings
     */
    public static DatabaseSettings settings(PostgresServer server, int poolSize, Duration statementTimeout,
                                            Duration lockTimeout, Duration connectionTimeout) {
        return new DatabaseSettings(server.url(), Optional.of(PostgresServer.USER), Optional.empty(), poolSize,
                                    statementTimeout, lockTimeout, connectionTimeout, Optional.empty());
    }

    /**
     * Opens the service's pool on a test's server, with the process-wide metrics registry.
     *
     * @param settings e.g. {@link #settings}
     * @return the pool, migrated; close it
     */
    public static Database open(DatabaseSettings settings) {
        return Database.open(settings, Services.get(MetricsFactory.class).globalRegistry());
    }

    @Override
    public void beforeAll(ExtensionContext context) throws IOException {
        if (PostgresServer.installed()) {
            server = PostgresServer.start();
            database = open(settings(server, poolSize, statementTimeout, lockTimeout, connectionTimeout));
        }
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        PostgresServer.assumeInstalled();
    }

    @Override
    public void afterAll(ExtensionContext context) {
        if (database != null) {
            database.close();
        }
        if (server != null) {
            server.close();
        }
    }

    /** @return the server */
    public PostgresServer server() {
        return server;
    }

    /** @return the pool on it */
    public Database database() {
        return database;
    }

    /**
     * Runs a query as the superuser, for assertions.
     *
     * @param sql a query
     * @return the first column of its first row, {@code null} when it has none
     * @throws SQLException when it fails
     */
    public String query(String sql) throws SQLException {
        return query(server, sql);
    }

    /**
     * Runs a query on a test's server as the superuser, for assertions.
     *
     * @param server the test's server
     * @param sql    a query
     * @return the first column of its first row, {@code null} when it has none
     * @throws SQLException when it fails
     */
    public static String query(PostgresServer server, String sql) throws SQLException {
        try (Connection connection = server.connect(); Statement statement = connection.createStatement();
             ResultSet rows = statement.executeQuery(sql)) {
            return rows.next() ? rows.getString(1) : null;
        }
    }

    /**
     * Runs a statement as the superuser, to set a test's scene.
     *
     * @param sql a statement
     * @throws SQLException when it fails
     */
    public void execute(String sql) throws SQLException {
        try (Connection connection = server.connect(); Statement statement = connection.createStatement()) {
            statement.execute(sql);
        }
    }
}
