package com.example.payments;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import com.example.payments.testing.PostgresServer;
import com.example.payments.testing.RedisServer;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;

import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.greaterThanOrEqualTo;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.lessThanOrEqualTo;

/**
 * The startup warm-up on the postgres backend, and on redis in front of PostgreSQL: by the time startup is complete
 * the pool holds its connections and the store's statements ran on the real database, in transactions that were
 * rolled back: no row written, no statement counted in the service's metrics.
 */
class PostgresWarmUpTest {

    private static final int POOL = 4;
    private static final int REQUESTS = 64;
    private static final List<String> TABLES = List.of("idempotency_records", "decisions", "authorizations",
            "merchant_quotas", "idempotency_bindings", "authorization_operations", "unknown_outcomes");

    @Test
    void startupCompletesWithThePoolFullAndTheStoreWarmedWithoutWritingARow() throws Exception {
        PostgresServer.assumeInstalled();
        try (PostgresServer postgres = PostgresServer.start();
             TestService service = TestService.start(config(postgres, PostgresServer.USER))) {
            assertWarmedWritingNothing(service, postgres);
        }
    }

    /**
     * The database sees at most 8 sandbox requests per pool connection (enough for pgjdbc to prepare each statement
     * on the server, at its fifth run); the rest of the warm-up runs in memory, so a replacement warming up does not
     * take the shared database from the running replicas.
     */
    @Test
    void theDatabaseSeesAtMostEightWarmUpRequestsPerPoolConnection() throws Exception {
        PostgresServer.assumeInstalled();
        try (PostgresServer postgres = PostgresServer.start()) {
            try (TestService service = TestService.start(config(postgres, PostgresServer.USER))) {
                assertThat(service.metric("warm_up_requests_total", Map.of("outcome", "answered")),
                           is((double) REQUESTS));
            }
            // The pool closed with the service; each backend flushes its statistics as it exits.
            try (Connection sql = postgres.connect()) {
                long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
                while (number(sql, "SELECT count(*) FROM pg_stat_activity WHERE application_name = "
                                   + "'payments-authorization'") > 0 && System.nanoTime() < deadline) {
                    Thread.sleep(100);
                }
                Thread.sleep(500);
                long inserted = number(sql, "SELECT n_tup_ins FROM pg_stat_user_tables WHERE relname = "
                                            + "'authorizations'");
                assertThat(inserted, greaterThan(0L));
                assertThat("authorizations inserted (then rolled back) by " + REQUESTS + " sandbox requests",
                           inserted, lessThanOrEqualTo(POOL * 8L));
            }
        }
    }

    @Test
    void withRedisInFrontTheDatabaseIsWarmedAndNothingIsWrittenToRedisEither() throws Exception {
        PostgresServer.assumeInstalled();
        RedisServer.assumeInstalled();
        try (RedisServer redis = RedisServer.start();
             PostgresServer postgres = PostgresServer.start();
             TestService service = TestService.start(withRedis(config(postgres, PostgresServer.USER), redis))) {
            assertWarmedWritingNothing(service, postgres);
            RedisClient client = RedisClient.create(redis.uri());
            try (StatefulRedisConnection<String, String> connection = client.connect()) {
                assertThat(connection.sync().dbsize(), is(0L));
            } finally {
                client.shutdown();
            }
        }
    }

    /**
     * A database that answers but refuses every write (a read-only standby behind the URL, or
     * {@code default_transaction_read_only}): every sandbox request fails, so the replica cannot serve on the real
     * store, and readiness must not answer 200 ("readiness never answers 200 before the replica can serve on the real
     * store").
     */
    @Test
    void aDatabaseThatRefusesEveryWriteIsNotReady() throws Exception {
        PostgresServer.assumeInstalled();
        try (PostgresServer postgres = PostgresServer.start()) {
            migrateThen(postgres, "DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET default_transaction_read_only "
                                      + "= on', current_database()); END $$");
            try (TestService service = TestService.start(config(postgres, PostgresServer.USER))) {
                assertThat("every sandbox request failed", service.metric("warm_up_requests_total",
                                                                          Map.of("outcome", "failed")),
                           greaterThan(0.0));
                assertThat("a replica that cannot write is not ready",
                           service.get(service.health("/health/ready")).statusCode(), is(503));
            }
        }
    }

    /**
     * The server lets this replica open fewer connections than {@code database.pool-size} (its role's or the
     * server's connection limit, or a rolling update's surge pod while the old pods hold theirs): the store works on
     * the connections it has, and readiness must come within a bound rather than wait for a pool that never fills.
     */
    @Test
    void aPoolThatCannotFillStillBecomesReady() throws Exception {
        PostgresServer.assumeInstalled();
        try (PostgresServer postgres = PostgresServer.start()) {
            migrateThen(postgres, "CREATE ROLE limited LOGIN CONNECTION LIMIT " + (POOL - 1),
                        "GRANT USAGE ON SCHEMA public TO limited",
                        "GRANT ALL ON ALL TABLES IN SCHEMA public TO limited",
                        "GRANT ALL ON ALL SEQUENCES IN SCHEMA public TO limited",
                        "GRANT ALL ON ALL FUNCTIONS IN SCHEMA public TO limited");
            try (TestService service = TestService.start(config(postgres, "limited"))) {
                long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
                int status = 0;
                while (status != 200 && System.nanoTime() < deadline) {
                    status = service.get(service.health("/health/ready")).statusCode();
                    Thread.sleep(500);
                }
                assertThat("ready on " + (POOL - 1) + " of " + POOL + " connections within 30 s", status, is(200));
            }
        }
    }

    // The postgres backend on the test's server as the role, with a small pool and a short warm-up.
    private static Map<String, String> config(PostgresServer postgres, String role) {
        return Map.of("idempotency.store", "postgres", "database.url", postgres.url(), "database.username", role,
                      "database.pool-size", String.valueOf(POOL), "warm-up.requests", String.valueOf(REQUESTS),
                      "warm-up.timeout", "PT60S");
    }

    private static Map<String, String> withRedis(Map<String, String> config, RedisServer redis) {
        Map<String, String> redisInFront = new HashMap<>(config);
        redisInFront.put("idempotency.store", "redis");
        redisInFront.put("idempotency.redis.uri", redis.uri());
        return redisInFront;
    }

    // The schema as the service would migrate it, then the test's changes to the database under it.
    private static void migrateThen(PostgresServer postgres, String... statements) throws SQLException {
        Flyway.configure().dataSource(postgres.url(), PostgresServer.USER, null).locations("classpath:db/migration")
                .placeholders(Map.of("validity_ms", "604800000")).load().migrate();
        try (Connection sql = postgres.connect(); Statement statement = sql.createStatement()) {
            for (String change : statements) {
                statement.execute(change);
            }
        }
    }

    // By the time startup is complete (TestService waited for it).
    private static void assertWarmedWritingNothing(TestService service, PostgresServer postgres) throws Exception {
        try (Connection sql = postgres.connect()) {
            // The pool's connections are open.
            assertThat(number(sql, "SELECT count(*) FROM pg_stat_activity WHERE application_name = "
                                   + "'payments-authorization'"), greaterThanOrEqualTo((long) POOL));
            // Every sandbox request went through the database's stores and was answered as expected (the GET of a
            // created id is a 404: nothing the sandbox wrote stayed).
            assertThat(service.metric("warm_up_requests_total", Map.of("outcome", "answered")), is((double) REQUESTS));
            assertThat(service.metric("warm_up_requests_total", Map.of("outcome", "failed")), is(0.0));
            // None of its statements is counted as the service's (the background workers' are).
            for (String statement : List.of("claim", "bind-key", "create-authorization", "record",
                                            "find-authorization")) {
                assertThat(statement, service.metric("database_statement_duration_seconds_count",
                                                     Map.of("statement", statement)), is(0.0));
                assertThat(statement, service.metric("database_statement_failures_total",
                                                     Map.of("statement", statement)), is(0.0));
            }
            assertThat(service.metric("idempotency_requests_total", Map.of()), is(0.0));
            for (String table : TABLES) {
                assertThat(table, number(sql, "SELECT count(*) FROM " + table), is(0L));
            }
            // The statements did run: PostgreSQL counts the inserted (then rolled back) rows; its statistics reach
            // the shared view within seconds.
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            long inserted = 0;
            while (inserted == 0 && System.nanoTime() < deadline) {
                inserted = number(sql, "SELECT n_tup_ins FROM pg_stat_user_tables WHERE relname = 'authorizations'");
                Thread.sleep(200);
            }
            assertThat(inserted, greaterThan(0L));
            // And the service is ready on it.
            assertThat(service.get(service.health("/health/ready")).statusCode(), is(200));
        }
    }

    private static long number(Connection sql, String query) throws SQLException {
        try (Statement statement = sql.createStatement()) {
            statement.execute("SELECT pg_stat_clear_snapshot()");
            try (ResultSet row = statement.executeQuery(query)) {
                row.next();
                return row.getLong(1);
            }
        }
    }
}
