package com.example.payments.idempotency;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import com.example.payments.database.PostgresIdempotencyStore;
import com.example.payments.testing.PostgresDatabase;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.instanceOf;
import static org.hamcrest.Matchers.is;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * The merchant's quota lock on the postgres backend (migrations V8 and V9): a merchant far from its quota claims
 * without waiting for its other claims in progress (one merchant is not serialized on the disk's flushes), a merchant
 * near it waits for them and stays exact, and claims in progress are counted when the merchant came near its quota
 * between the two looks at its counts. "Far" is by more than the backends connected to the database (V9), so the
 * quotas here are below the test server's {@code max_connections} (200, as in the CloudNativePG cluster shipped),
 * the margin V8 used, under which these merchants were always near. Each test holds a transaction open on a
 * connection of its own to play the claim in progress.
 */
class PostgresQuotaLockTest {

    private static final Duration LEASE = Duration.ofSeconds(30);
    private static final long WAIT_MS = 1_000;
    @RegisterExtension
    static final PostgresDatabase POSTGRES = PostgresDatabase.withPool(4, Duration.ofSeconds(10),
                                                                       Duration.ofSeconds(5), Duration.ofSeconds(20));
    // Below max_connections, far above the backends the tests connect.
    private static final int QUOTA = 100;
    private static PostgresIdempotencyStore store;

    @BeforeAll
    static void openStore() throws SQLException {
        if (POSTGRES.database() != null) {
            store = PostgresIdempotencyStore.systemOfRecord(POSTGRES.database(), Duration.ofDays(7));
            assertThat("the test server's max_connections", Integer.parseInt(POSTGRES.query("SHOW max_connections")),
                       greaterThan(QUOTA));
        }
    }

    @Test
    void aMerchantFarFromItsQuotaClaimsWhileAnotherOfItsClaimsIsInProgress() throws Exception {
        String merchant = "m_" + UUID.randomUUID();
        Quota farFromIt = new Quota(QUOTA, 1_000_000);
        // Two committed slot rows of the merchant: each claim counts in one the other does not hold. (A merchant's
        // first claims insert their slot rows, and one that picks the slot another claim is inserting waits for it:
        // 1 in 32, once per slot.)
        POSTGRES.execute("INSERT INTO merchant_quota_slots VALUES ('" + merchant + "', 0, 0, 0), ('" + merchant
                         + "', 1, 0, 0)");
        try (Connection inProgress = POSTGRES.server().connect()) {
            inProgress.setAutoCommit(false);
            claimOn(inProgress, merchant, farFromIt);
            // Before V9 (before V8 with any quota) this waited for the claim in progress to commit (and for its flush).
            assertThat(claimWithin(merchant, farFromIt, 4 * WAIT_MS), instanceOf(Claim.Acquired.class));
            inProgress.commit();
        }
        assertThat(counts(merchant), is("2 2"));
    }

    @Test
    void aMerchantNearItsQuotaWaitsForItsClaimsInProgressAndStaysExact() throws Exception {
        String merchant = "m_" + UUID.randomUUID();
        Quota near = new Quota(2, 1_000_000);
        try (Connection inProgress = POSTGRES.server().connect();
             ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
            inProgress.setAutoCommit(false);
            claimOn(inProgress, merchant, near);
            claimOn(inProgress, merchant, near);
            Future<Claim> waiting = threads.submit(() -> store.claim(key(merchant), List.of(identity()), LEASE, near));
            assertThrows(TimeoutException.class, () -> waiting.get(WAIT_MS, TimeUnit.MILLISECONDS),
                         "a claim near the quota runs while another claim of the merchant is in progress");
            inProgress.commit();
            // The two in progress took the quota: exactly, the waiting one is refused once they are visible.
            assertThat(waiting.get(20, TimeUnit.SECONDS), instanceOf(Claim.OverQuota.class));
        }
        assertThat(counts(merchant), is("2 2"));
    }

    @Test
    void claimsInProgressCountWhenTheMerchantCameNearItsQuotaBetweenTheTwoLooks() throws Exception {
        String merchant = "m_" + UUID.randomUUID();
        Quota quota = new Quota(QUOTA, 1_000_000);
        long lock = Long.parseLong(POSTGRES.query("SELECT hashtextextended('quota:" + merchant + "', 0)"));
        try (Connection near = POSTGRES.server().connect(); Connection other = POSTGRES.server().connect();
             ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
            near.setAutoCommit(false);
            other.setAutoCommit(false);
            // A transaction near the limit holds the lock alone and counts QUOTA - 1 in flight, not
            // committed yet: the claim below looks at the counts first, finds the merchant far from its quota and
            // waits for the lock in shared mode; so does another transaction, which stays in progress after.
            execute(near, "SELECT pg_advisory_xact_lock(" + lock + ")");
            execute(near, "INSERT INTO merchant_quota_slots VALUES ('" + merchant + "', 0, " + (QUOTA - 1) + ", 0)");
            Future<Claim> claim = threads.submit(() -> store.claim(key(merchant), List.of(identity()), LEASE, quota));
            CompletableFuture<Void> sharing = CompletableFuture.runAsync(
                    () -> execute(other, "SELECT pg_advisory_xact_lock_shared(" + lock + ")"), threads);
            awaitWaiters(lock, 2);
            near.commit();
            sharing.get(20, TimeUnit.SECONDS);
            // QUOTA - 1 visible, the other holder in progress (it may count one), this claim: one over.
            assertThat(claim.get(20, TimeUnit.SECONDS), instanceOf(Claim.OverQuota.class));
            other.rollback();
        }
        assertThat(store.claim(key(merchant), List.of(identity()), LEASE, quota), instanceOf(Claim.Acquired.class));
        assertThat(counts(merchant), is(QUOTA + " 1"));
    }

    // A claim of the merchant in the transaction of the connection given, not committed.
    private static void claimOn(Connection connection, String merchant, Quota quota) throws SQLException {
        String key = key(merchant);
        execute(connection, "SELECT idempotency_claim_bind('" + key.replace("'", "''") + "', '" + merchant
                            + "', 'authorize', 'k', ARRAY['" + "f".repeat(64) + UUID.randomUUID() + "'], "
                            + "ARRAY['quota-test'], ARRAY['" + UUID.randomUUID() + "'], 30000, "
                            + quota.maxInFlight() + ", " + quota.maxRecords() + ", true)");
    }

    private static Claim claimWithin(String merchant, Quota quota, long millis) throws Exception {
        try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
            return threads.submit(() -> store.claim(key(merchant), List.of(identity()), LEASE, quota))
                    .get(millis, TimeUnit.MILLISECONDS);
        }
    }

    // Until this many transactions wait for the lock (the claim and the other one queued behind the holder).
    private static void awaitWaiters(long lock, int waiters) throws Exception {
        String sql = "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND objsubid = 1"
                     + " AND objid::bigint = " + (lock & 0xFFFFFFFFL);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (Integer.parseInt(POSTGRES.query(sql)) < waiters) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("never " + waiters + " waiters for the merchant's lock");
            }
            Thread.sleep(20);
        }
    }

    private static void execute(Connection connection, String sql) {
        try (Statement statement = connection.createStatement()) {
            statement.execute(sql);
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    private static Identity identity() {
        String id = UUID.randomUUID().toString();
        return new Identity(id.replace("-", "").repeat(2), "att_" + id, new DecisionKey("quota-test", id));
    }

    private static String key(String merchant) {
        return RequestIdentities.lookupKey("authorize", merchant, new IdempotencyKey(UUID.randomUUID().toString()));
    }

    private static String counts(String merchant) throws SQLException {
        return POSTGRES.query("SELECT in_flight || ' ' || records FROM merchant_quota_counts WHERE merchant = '"
                              + merchant + "'");
    }
}
