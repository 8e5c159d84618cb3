package com.example.payments.idempotency;

import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

import com.example.payments.database.Database;
import com.example.payments.database.DatabaseSettings;
import com.example.payments.database.PostgresIdempotencyStore;
import com.example.payments.testing.PostgresServer;

import io.helidon.metrics.api.MetricsFactory;
import io.helidon.service.registry.Services;

import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.instanceOf;

/**
 * The key's binding on the postgres backend is durable before the work runs (docs/idempotency.md: "The key is bound
 * durably to the request's fingerprint in the system of record before the work runs: another request under a used
 * key is 422 even after the registry lost its records"). Since V6 the claim that binds the key commits with
 * {@code synchronous_commit} off, and the issuer call follows it at once: a crash of the database before the WAL
 * writer flushed it loses the binding while the first request's call is on its way, and another request under the
 * same key is acquired and authorized too.
 */
class PostgresLostClaimTest {

    private static final Duration LEASE = Duration.ofSeconds(30);

    @Test
    void aKeyAcquiredBeforeADatabaseCrashStaysBoundToItsRequest() throws Exception {
        PostgresServer.assumeInstalled();
        try (PostgresServer server = PostgresServer.start()) {
            try (Connection sql = server.connect(); Statement statement = sql.createStatement()) {
                // The WAL writer's pace, slowed so that the crash below reliably comes before its next flush
                // (by default it runs every 200 ms: the same loss, in a window of up to 600 ms).
                statement.execute("ALTER SYSTEM SET wal_writer_delay = '10s'");
                statement.execute("SELECT pg_reload_conf()");
            }
            DatabaseSettings settings = new DatabaseSettings(server.url(), Optional.of(PostgresServer.USER),
                                                             Optional.empty(), 2, Duration.ofSeconds(2),
                                                             Duration.ofSeconds(1), Duration.ofSeconds(5),
                                                             Optional.empty());
            try (Database database = Database.open(settings, Services.get(MetricsFactory.class).globalRegistry())) {
                PostgresIdempotencyStore store = PostgresIdempotencyStore.systemOfRecord(database, Duration.ofDays(7));
                String key = "9:authorize:5:m_123:36:" + UUID.randomUUID();
                Thread.sleep(1000);
                // Request A acquires the key; its issuer call would go out now.
                assertThat(store.claim(key, List.of(identity()), LEASE, Quota.UNLIMITED),
                           instanceOf(Claim.Acquired.class));
                server.kill();
                server.restart();
                // Request B, another body under the same Idempotency-Key.
                Claim other = null;
                long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
                while (other == null && System.nanoTime() < deadline) {
                    try {
                        other = store.claim(key, List.of(identity()), LEASE, Quota.UNLIMITED);
                    } catch (IdempotencyStore.UnavailableException e) {
                        Thread.sleep(200);
                    }
                }
                assertThat("another request under the key of an acquired one", other,
                           instanceOf(Claim.Mismatch.class));
            }
        }
    }

    /**
     * The merchant's in-flight count goes with the lost claim, while its issuer call is still running: the quota
     * ("exact: not one request over the quota") then admits another request on top of it.
     */
    @Test
    void aClaimInFlightBeforeADatabaseCrashStillCountsAgainstTheQuota() throws Exception {
        PostgresServer.assumeInstalled();
        try (PostgresServer server = PostgresServer.start()) {
            try (Connection sql = server.connect(); Statement statement = sql.createStatement()) {
                statement.execute("ALTER SYSTEM SET wal_writer_delay = '10s'");
                statement.execute("SELECT pg_reload_conf()");
            }
            DatabaseSettings settings = new DatabaseSettings(server.url(), Optional.of(PostgresServer.USER),
                                                             Optional.empty(), 2, Duration.ofSeconds(2),
                                                             Duration.ofSeconds(1), Duration.ofSeconds(5),
                                                             Optional.empty());
            try (Database database = Database.open(settings, Services.get(MetricsFactory.class).globalRegistry())) {
                PostgresIdempotencyStore store = PostgresIdempotencyStore.systemOfRecord(database, Duration.ofDays(7));
                String merchant = "m_" + UUID.randomUUID();
                Quota oneInFlight = new Quota(1, 1000);
                Thread.sleep(1000);
                assertThat(store.claim(key(merchant), List.of(identity()), LEASE, oneInFlight),
                           instanceOf(Claim.Acquired.class));
                server.kill();
                server.restart();
                Claim second = null;
                long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
                while (second == null && System.nanoTime() < deadline) {
                    try {
                        second = store.claim(key(merchant), List.of(identity()), LEASE, oneInFlight);
                    } catch (IdempotencyStore.UnavailableException e) {
                        Thread.sleep(200);
                    }
                }
                assertThat("a second request in flight for a merchant allowed one", second,
                           instanceOf(Claim.OverQuota.class));
            }
        }
    }

    private static String key(String merchant) {
        return RequestIdentities.lookupKey("authorize", merchant, new IdempotencyKey(UUID.randomUUID().toString()));
    }

    private static Identity identity() {
        String id = UUID.randomUUID().toString();
        return new Identity(id.replace("-", "").repeat(2), "att_" + id, new DecisionKey("lost-claim-test", id));
    }
}
