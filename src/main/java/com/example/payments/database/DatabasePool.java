package com.example.payments.database;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.HikariPoolMXBean;
import io.helidon.metrics.api.Gauge;
import io.helidon.metrics.api.MeterRegistry;
import io.helidon.metrics.api.Tag;

/**
 * The HikariCP pool of {@link Database}: configured from {@code database.*} so that each wait is bounded (pool wait
 * {@code database.connection-timeout}, connect and login timeouts, server-side {@code statement_timeout} and
 * {@code lock_timeout}, a socket timeout backstop), started without waiting for the database, and reporting its
 * connections on {@code /metrics} ({@code database_pool_connections{state="active"|"idle"|"pending"}} and
 * {@code database_pool_max_connections}). Running calls on its connections is {@link Database}'s.
 */
final class DatabasePool {

    private final DatabaseSettings settings;
    private final HikariDataSource pool;

    private DatabasePool(DatabaseSettings settings, HikariDataSource pool) {
        this.settings = settings;
        this.pool = pool;
    }

    /**
     * Opens the pool (it connects in the background, up to {@code database.pool-size}) and registers its gauges.
     *
     * @param settings {@code database.*}
     * @param meters   the service's registry
     * @return the pool
     */
    static DatabasePool open(DatabaseSettings settings, MeterRegistry meters) {
        DatabasePool pool = new DatabasePool(settings, new HikariDataSource(hikari(settings)));
        pool.registerMeters(meters);
        return pool;
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
     * Borrows a connection, waiting at most {@code database.connection-timeout}.
     *
     * @return a connection in auto-commit mode; closing it returns it to the pool
     * @throws SQLException when none came within the wait, or the pool is closed
     */
    Connection connection() throws SQLException {
        return pool.getConnection();
    }

    /**
     * Connections the pool holds open (idle and in use).
     *
     * @return 0 to {@code database.pool-size}
     */
    int totalConnections() {
        HikariPoolMXBean bean = pool.getHikariPoolMXBean();
        return bean == null ? 0 : bean.getTotalConnections();
    }

    /**
     * Whether {@link #close()} ran.
     *
     * @return {@code true} once the pool is closed
     */
    boolean closed() {
        return pool.isClosed();
    }

    /** Closes the pool's connections. */
    void close() {
        pool.close();
    }

    private void registerMeters(MeterRegistry meters) {
        for (String state : new String[] {"active", "idle", "pending"}) {
            meters.getOrCreate(Gauge.builder("database_pool_connections", this, p -> p.connections(state))
                                       .tags(List.of(Tag.create("state", state)))
                                       .description("Connections of the database pool, by state (pending: callers "
                                                    + "waiting for one)"));
        }
        meters.getOrCreate(Gauge.builder("database_pool_max_connections", this, p -> p.settings.poolSize())
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
}
