package com.example.payments.idempotency;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.function.Supplier;

import com.example.payments.database.Database;
import com.example.payments.database.PostgresIdempotencyStore;
import com.example.payments.testing.PostgresDatabase;
import com.example.payments.testing.PostgresServer;

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
        String key = "9:authorize:5:m_123:36:" + UUID.randomUUID();
        // Request B, another body under the same Idempotency-Key.
        assertThat("another request under the key of an acquired one", secondClaimAcrossACrash(() -> key,
                   Quota.UNLIMITED), instanceOf(Claim.Mismatch.class));
    }

    /**
     * The merchant's in-flight count goes with the lost claim, while its issuer call is still running: the quota
     * ("exact: not one request over the quota") then admits another request on top of it.
     */
    @Test
    void aClaimInFlightBeforeADatabaseCrashStillCountsAgainstTheQuota() throws Exception {
        String merchant = "m_" + UUID.randomUUID();
        assertThat("a second request in flight for a merchant allowed one", secondClaimAcrossACrash(
                () -> key(merchant), new Quota(1, 1000)), instanceOf(Claim.OverQuota.class));
    }

    // Request A acquires a key, its issuer call would go out now, and the database crashes; then request B claims.
    private static Claim secondClaimAcrossACrash(Supplier<String> keys, Quota quota) throws Exception {
        PostgresServer.assumeInstalled();
        try (PostgresServer server = PostgresServer.start()) {
            // The WAL writer's pace, slowed so that the crash below reliably comes before its next flush
            // (by default it runs every 200 ms: the same loss, in a window of up to 600 ms).
            server.execute(PostgresServer.DATABASE, "ALTER SYSTEM SET wal_writer_delay = '10s'");
            server.execute(PostgresServer.DATABASE, "SELECT pg_reload_conf()");
            try (Database database = PostgresDatabase.open(PostgresDatabase.settings(
                    server, 2, Duration.ofSeconds(2), Duration.ofSeconds(1), Duration.ofSeconds(5)))) {
                PostgresIdempotencyStore store = PostgresIdempotencyStore.systemOfRecord(database, Duration.ofDays(7));
                Thread.sleep(1000);
                assertThat(store.claim(keys.get(), List.of(identity()), LEASE, quota),
                           instanceOf(Claim.Acquired.class));
                server.kill();
                server.restart();
                long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
                while (System.nanoTime() < deadline) {
                    try {
                        return store.claim(keys.get(), List.of(identity()), LEASE, quota);
                    } catch (IdempotencyStore.UnavailableException e) {
                        Thread.sleep(200);
                    }
                }
                return null;
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
