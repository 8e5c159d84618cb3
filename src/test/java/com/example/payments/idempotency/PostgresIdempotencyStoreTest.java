package com.example.payments.idempotency;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

import com.example.payments.database.PostgresIdempotencyStore;
import com.example.payments.testing.PostgresDatabase;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * The store contract, unchanged, against {@link PostgresIdempotencyStore} on a private PostgreSQL, plus what only the
 * database has: the rows it writes (no card data, the merchant's counts) and the retention sweep in batches, one
 * replica at a time.
 */
class PostgresIdempotencyStoreTest extends IdempotencyStoreContract {

    private static final String COUNT = "SELECT count(*) FROM idempotency_records WHERE merchant = '";
    @RegisterExtension
    static final PostgresDatabase POSTGRES = PostgresDatabase.withPool(16, Duration.ofSeconds(2),
                                                                       Duration.ofSeconds(1), Duration.ofSeconds(2));
    private static PostgresIdempotencyStore store;

    @BeforeAll
    static void openStore() {
        if (POSTGRES.database() != null) {
            store = PostgresIdempotencyStore.create(POSTGRES.database(), decision -> Optional.empty());
        }
    }

    @Override
    IdempotencyStore store() {
        return store;
    }

    @Override
    void sweep() {
        store.sweep(500, 20);
    }

    @Test
    void theRecordRowHoldsMerchantOperationKeyAndStateAndTheMerchantIsCounted() throws SQLException {
        String merchant = "m_" + UUID.randomUUID();
        String key = RequestIdentities.lookupKey("authorize", merchant, new IdempotencyKey("order-42"));
        Identity identity = identity("9");
        Claim.Acquired claim = (Claim.Acquired) store.claim(key, List.of(identity), LONG, new Quota(5, 5));
        assertThat(query("SELECT merchant || ' ' || operation || ' ' || idempotency_key || ' ' || state "
                         + "FROM idempotency_records WHERE lookup_key = '" + key + "'"),
                   is(merchant + " authorize order-42 in_flight"));
        assertThat(query("SELECT in_flight || ' ' || records FROM merchant_quota_counts WHERE merchant = '" + merchant + "'"),
                   is("1 1"));

        store.recordAndComplete(key, identity, claim.token(), decision(identity, "row"), Duration.ofHours(24));
        assertThat(query("SELECT state || ' ' || response_id FROM idempotency_records WHERE lookup_key = '" + key
                         + "'"), is("completed " + identity.decision().id()));
        assertThat(query("SELECT attempt_id FROM decisions WHERE id = '" + identity.decision().id() + "'"),
                   is(identity.attemptId()));
        assertThat(query("SELECT in_flight || ' ' || records FROM merchant_quota_counts WHERE merchant = '" + merchant + "'"),
                   is("0 1"));
    }

    @Test
    void theSweeperDeletesExpiredRowsInBatchesAndUncountsThem() throws Exception {
        String merchant = "m_" + UUID.randomUUID();
        for (int i = 0; i < 7; i++) {
            String key = RequestIdentities.lookupKey("authorize", merchant, new IdempotencyKey("k" + i));
            Identity identity = identity(String.valueOf(i));
            Claim.Acquired claim = (Claim.Acquired) store.claim(key, List.of(identity), LONG, Quota.UNLIMITED);
            if (i % 2 == 0) {
                store.recordAndComplete(key, identity, claim.token(), decision(identity, "short"), SHORT);
            } else {
                store.release(key, claim.token());
                store.claim(key, List.of(identity), SHORT, Quota.UNLIMITED);
            }
        }
        Thread.sleep(2 * SHORT.toMillis());
        // Other tests share the database: sweep until this merchant's rows are gone, two rows per statement at most.
        for (int run = 0; run < 100 && !query(COUNT + merchant + "'").equals("0"); run++) {
            assertThat(store.sweep(2, 1) <= 2, is(true));
        }
        assertThat(query("SELECT count(*) FROM idempotency_records WHERE merchant = '" + merchant + "'"), is("0"));
        assertThat(query("SELECT in_flight || ' ' || records FROM merchant_quota_counts WHERE merchant = '" + merchant + "'"),
                   is("0 0"));
    }

    @Test
    void whileAnotherReplicaSweepsTheSweepReturnsAtOnceAndTheNextOneDeletes() throws Exception {
        String merchant = "m_" + UUID.randomUUID();
        String key = RequestIdentities.lookupKey("authorize", merchant, new IdempotencyKey("swept"));
        store.claim(key, List.of(identity("s")), SHORT, Quota.UNLIMITED);
        Thread.sleep(2 * SHORT.toMillis());
        try (Connection otherReplica = POSTGRES.server().connect()) {
            otherReplica.setAutoCommit(false);
            try (Statement statement = otherReplica.createStatement()) {
                statement.execute("SELECT pg_try_advisory_xact_lock(hashtextextended('idempotency:sweep', 0))");
            }
            assertThat(store.sweep(500, 20), is(0));
            assertThat(query(COUNT + merchant + "'"), is("1"));
            otherReplica.commit();
        }
        for (int run = 0; run < 100 && !query(COUNT + merchant + "'").equals("0"); run++) {
            store.sweep(500, 20);
        }
        assertThat(query(COUNT + merchant + "'"), is("0"));
    }

    @Test
    void aFailedSweepStatementHalvesTheNextOnesAndAFullOneDoublesThemBack() throws Exception {
        String merchant = "m_" + UUID.randomUUID();
        for (int i = 0; i < 70; i++) {
            store.claim(RequestIdentities.lookupKey("authorize", merchant, new IdempotencyKey("h" + i)),
                        List.of(identity("h")), SHORT, Quota.UNLIMITED);
        }
        Thread.sleep(2 * SHORT.toMillis());
        try (Connection otherSession = POSTGRES.server().connect()) {
            otherSession.setAutoCommit(false);
            try (Statement statement = otherSession.createStatement()) {
                // The sweep's delete of decisions waits for this lock past lock_timeout: the statement fails.
                statement.execute("LOCK TABLE decisions IN ACCESS EXCLUSIVE MODE");
            }
            assertThrows(IdempotencyStore.UnavailableException.class, () -> store.sweep(40, 1));
            otherSession.rollback();
        }
        // At least 70 expired rows (other tests' too): each statement deletes as many as its batch.
        assertThat(store.sweep(40, 1), is(20));
        assertThat(store.sweep(40, 1), is(40));
    }

    /**
     * The plan PostgreSQL caches for the sweep function after five runs is a generic one, with the batch size as a
     * parameter it cannot see: V1-V10's delete then scanned the whole table of decisions for every batch (a hash
     * semi join; 225 ms for 500 of 300,000 rows), and ran past statement_timeout under load. With the generic plan
     * forced, a batch is deleted without a sequential scan of the table.
     */
    @Test
    void aSweepUnderTheCachedGenericPlanDoesNotScanTheWholeTable() throws Exception {
        try (Connection session = POSTGRES.server().connect()) {
            session.setAutoCommit(false);
            try (Statement statement = session.createStatement()) {
                statement.execute("SET LOCAL plan_cache_mode = force_generic_plan");
                statement.execute("INSERT INTO decisions SELECT 'sweep-plan', 'd' || i, 'a' || i, '\\x00'::bytea, "
                                  + "now(), now() - interval '1 hour' FROM generate_series(1, 20000) i");
                statement.execute("ANALYZE decisions");
                statement.execute("SELECT idempotency_sweep(100)");
                try (var row = statement.executeQuery("SELECT seq_scan FROM pg_stat_xact_user_tables WHERE relname "
                                                      + "= 'decisions'")) {
                    row.next();
                    assertThat("sequential scans of decisions in one sweep", row.getLong(1), is(0L));
                }
                try (var row = statement.executeQuery("SELECT count(*) FROM decisions WHERE kind = 'sweep-plan'")) {
                    row.next();
                    assertThat("a batch of 100 deleted", row.getLong(1), is(19_900L));
                }
            } finally {
                session.rollback();
            }
        }
    }

    private static String query(String sql) throws SQLException {
        return POSTGRES.query(sql);
    }
}
