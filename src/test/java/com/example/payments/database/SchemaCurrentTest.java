package com.example.payments.database;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

import com.example.payments.testing.PostgresServer;

import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;

/**
 * Migrations do not block a replica whose schema is already current: while another replica's migration holds
 * Flyway's lock, a replica of this build (every version it ships applied) is migrated, where Flyway would wait for the
 * lock (10 retries, 1 s apart) and fail.
 */
class SchemaCurrentTest {

    @Test
    void aReplicaWhoseSchemaIsCurrentIsNotBlockedByAnotherReplicasMigration() throws Exception {
        PostgresServer.assumeInstalled();
        try (PostgresServer server = PostgresServer.start();
             Connection sql = server.connect()) {
            Flyway newer = Flyway.configure().dataSource(server.url(), PostgresServer.USER, null)
                    .locations("classpath:db/migration", "classpath:db/slow-migration")
                    .placeholders(java.util.Map.of("validity_ms", "604800000"))
                    .load();
            CompletableFuture<Void> migrating = CompletableFuture.runAsync(newer::migrate);
            try {
                long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
                while (count(sql, "SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(60)%' "
                                  + "AND pid <> pg_backend_pid()") == 0) {
                    assertThat("the slow migration started", System.nanoTime() < deadline, is(true));
                    Thread.sleep(50);
                }
                DatabaseSettings settings = new DatabaseSettings(server.url(), Optional.of(PostgresServer.USER),
                        Optional.empty(), 2, Duration.ofSeconds(2), Duration.ofSeconds(1), Duration.ofSeconds(2),
                        Optional.empty());
                try (Migrations migrations = Migrations.create(settings, Duration.ofDays(7))) {
                    // Flyway would have waited for the lock (10 retries, 1 s apart) and failed.
                    assertThat(migrations.migrate().isEmpty(), is(true));
                    assertThat(migrations.done(), is(true));
                }
                assertThat("the other replica's migration is still running", migrating.isDone(), is(false));
            } finally {
                try (Statement statement = sql.createStatement()) {
                    statement.execute("SELECT pg_cancel_backend(pid) FROM pg_stat_activity "
                                      + "WHERE query LIKE '%pg_sleep(60)%' AND pid <> pg_backend_pid()");
                }
                migrating.exceptionally(failure -> null).join();
            }
        }
    }

    /**
     * An applied migration whose checksum no longer matches (a shipped file edited after it ran, or the history row
     * changed) is refused, as Flyway's validation refused it before the fast path: readiness stays 503 naming
     * {@code database} instead of a replica serving on a schema its files do not describe.
     */
    @Test
    void anAppliedMigrationWhoseChecksumChangedIsStillRefused() throws Exception {
        PostgresServer.assumeInstalled();
        try (PostgresServer server = PostgresServer.start();
             Connection sql = server.connect()) {
            DatabaseSettings settings = new DatabaseSettings(server.url(), Optional.of(PostgresServer.USER),
                    Optional.empty(), 2, Duration.ofSeconds(2), Duration.ofSeconds(1), Duration.ofSeconds(2),
                    Optional.empty());
            try (Migrations first = Migrations.create(settings, Duration.ofDays(7))) {
                assertThat(first.migrate().isEmpty(), is(true));
            }
            try (Statement statement = sql.createStatement()) {
                statement.execute("UPDATE flyway_schema_history SET checksum = checksum + 1 WHERE version = '6'");
            }
            try (Migrations next = Migrations.create(settings, Duration.ofDays(7))) {
                assertThat("Flyway's validation refuses a changed checksum", next.migrate().isPresent(), is(true));
                assertThat(next.done(), is(false));
            }
        }
    }

    /** The fast path's checksum of each shipped file is the one Flyway stored when it applied it. */
    @Test
    void theShippedChecksumsAreThoseFlywayRecords() throws Exception {
        PostgresServer.assumeInstalled();
        try (PostgresServer server = PostgresServer.start();
             Connection sql = server.connect()) {
            Flyway.configure().dataSource(server.url(), PostgresServer.USER, null)
                    .locations("classpath:db/migration")
                    .placeholders(Map.of("validity_ms", "604800000"))
                    .load().migrate();
            Map<String, Integer> recorded = new HashMap<>();
            try (Statement statement = sql.createStatement();
                 ResultSet rows = statement.executeQuery("SELECT version, checksum FROM flyway_schema_history "
                                                         + "WHERE version IS NOT NULL")) {
                while (rows.next()) {
                    recorded.put(rows.getString(1), rows.getInt(2));
                }
            }
            assertThat(SchemaVersions.shipped().isEmpty(), is(false));
            assertThat(SchemaVersions.shipped(), is(recorded));
        }
    }

    private static long count(Connection sql, String query) throws Exception {
        try (Statement statement = sql.createStatement(); ResultSet row = statement.executeQuery(query)) {
            row.next();
            return row.getLong(1);
        }
    }
}
