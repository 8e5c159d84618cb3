package com.example.payments.idempotency;

import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import com.example.payments.database.PostgresIdempotencyStore;
import com.example.payments.testing.PostgresDatabase;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.instanceOf;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.lessThanOrEqualTo;

/**
 * The merchant quota of the postgres backend (migration V6: counts spread over slot rows, checked under the
 * merchant's claim lock) under concurrency, through the store the service runs ({@code systemOfRecord}: claims bind
 * their keys): many concurrent claims of one merchant never take more keys than its quota (the documented bound is
 * exact), claims and recordings side by side leave counts equal to the rows they count, and counts from before V6
 * (the merchant's {@code merchant_quotas} row) still count. The quotas of 20 and 100 are above the backends this
 * class connects (its pool of 16, and the test's own), so the first claims may take the merchant's lock in shared
 * mode (migration V9) before the merchant comes near its limit; which modes run is not asserted here
 * ({@code PostgresQuotaLockTest} asserts each).
 */
class PostgresMerchantQuotaTest {

    private static final Duration LEASE = Duration.ofSeconds(30);
    // Timeouts far above the defaults: on a busy machine, hundreds of claims queue for the pool and the locks.
    @RegisterExtension
    static final PostgresDatabase POSTGRES = PostgresDatabase.withPool(16, Duration.ofSeconds(10),
                                                                       Duration.ofSeconds(5), Duration.ofSeconds(20));
    private static PostgresIdempotencyStore store;

    @BeforeAll
    static void openStore() {
        if (POSTGRES.database() != null) {
            store = PostgresIdempotencyStore.systemOfRecord(POSTGRES.database(), Duration.ofDays(7));
        }
    }

    @Test
    void manyConcurrentClaimsOfOneMerchantTakeExactlyItsInFlightQuota() throws Exception {
        String merchant = "m_" + UUID.randomUUID();
        Quota quota = new Quota(20, 1000);
        List<Claim> first = claimConcurrently(merchant, 200, quota);
        List<Claim.Acquired> acquired = acquired(first);
        assertThat(acquired.size(), is(20));
        assertThat(first.stream().filter(c -> c instanceof Claim.OverQuota o && o.limit() == Quota.Limit.IN_FLIGHT)
                           .count(), is(180L));
        assertThat(counts(merchant), is("20 20"));

        // Half of them decided: ten keys in flight free up, and again exactly ten of many concurrent claims get one.
        for (Claim.Acquired claim : acquired.subList(0, 10)) {
            Identity identity = identity(claim);
            assertThat(store.recordAndComplete(claim.lookupKey(), identity, claim.token(),
                                               new Decision(identity.decision(), body()), LEASE).completed(), is(true));
        }
        assertThat(acquired(claimConcurrently(merchant, 100, quota)).size(), is(10));
        assertThat(counts(merchant), is("20 30"));
        assertThat(counts(merchant), is(rows(merchant)));
    }

    @Test
    void manyConcurrentClaimsOfOneMerchantTakeExactlyItsRecordsQuota() throws Exception {
        String merchant = "m_" + UUID.randomUUID();
        Quota quota = new Quota(100, 100);
        for (Claim.Acquired claim : acquired(claimConcurrently(merchant, 60, quota))) {
            Identity identity = identity(claim);
            store.recordAndComplete(claim.lookupKey(), identity, claim.token(),
                                    new Decision(identity.decision(), body()), LEASE);
        }
        List<Claim> claims = claimConcurrently(merchant, 150, quota);
        assertThat(acquired(claims).size(), is(40));
        assertThat(claims.stream().filter(c -> c instanceof Claim.OverQuota o && o.limit() == Quota.Limit.RECORDS)
                           .count(), is(110L));
        assertThat(counts(merchant), is("40 100"));
    }

    @Test
    void concurrentClaimsRecordingsAndReleasesLeaveCountsEqualToTheRows() throws Exception {
        String merchant = "m_" + UUID.randomUUID();
        CountDownLatch start = new CountDownLatch(1);
        List<Future<?>> workers = new ArrayList<>();
        try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
            // Fewer workers than the pool's 16 connections: each waits for the database, never for the pool.
            for (int t = 0; t < 12; t++) {
                int worker = t;
                workers.add(threads.submit(() -> {
                    start.await();
                    for (int i = 0; i < 40; i++) {
                        Identity identity = PostgresMerchantQuotaTest.identity();
                        String key = keyOf(merchant);
                        if (store.claim(key, List.of(identity), LEASE, Quota.UNLIMITED) instanceof Claim.Acquired c) {
                            if ((worker + i) % 3 == 0) {
                                store.release(key, c.token());
                            } else {
                                store.recordAndComplete(key, identity, c.token(),
                                                        new Decision(identity.decision(), body()), LEASE);
                            }
                        }
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> worker : workers) {
                worker.get();
            }
        }
        assertThat(counts(merchant), is(rows(merchant)));
        assertThat(counts(merchant).split(" ")[0], is("0"));
        // Spread over slots (the recordings never waited for each other), never more than 32.
        int slots = Integer.parseInt(query("SELECT count(*) FROM merchant_quota_slots WHERE merchant = '" + merchant
                                           + "'"));
        assertThat(slots, greaterThan(0));
        assertThat(slots, lessThanOrEqualTo(32));
    }

    @Test
    void countsFromBeforeTheSlotsStillCount() throws Exception {
        String merchant = "m_" + UUID.randomUUID();
        POSTGRES.execute("INSERT INTO merchant_quotas VALUES ('" + merchant + "', 3, 5)");
        assertThat(acquired(claimConcurrently(merchant, 20, new Quota(5, 100))).size(), is(2));
        assertThat(counts(merchant), is("5 7"));
    }

    @Test
    void anAcquisitionBindsTheKeyAndAnotherRequestUnderItIsAMismatch() throws Exception {
        String merchant = "m_" + UUID.randomUUID();
        String key = keyOf(merchant);
        Identity first = identity();
        Claim.Acquired claim = (Claim.Acquired) store.claim(key, List.of(first), LEASE, Quota.UNLIMITED);
        assertThat(claim.bound(), is(new KeyBindings.Bound(0, true)));
        assertThat(query("SELECT fingerprint FROM idempotency_bindings WHERE lookup_key = '" + key + "'"),
                   is(first.fingerprint()));
        // Released without unbinding: the binding still names the first request.
        store.release(key, claim.token());
        assertThat(store.claim(key, List.of(identity()), LEASE, Quota.UNLIMITED), instanceOf(Claim.Mismatch.class));
        Claim again = store.claim(key, List.of(first), LEASE, Quota.UNLIMITED);
        assertThat(((Claim.Acquired) again).bound(), is(new KeyBindings.Bound(0, false)));
        assertThat(counts(merchant), is("1 1"));
    }

    @Test
    void anAuthorizationDecisionIsRecordedWithItsRow() throws Exception {
        String merchant = "m_" + UUID.randomUUID();
        String key = keyOf(merchant);
        String id = UUID.randomUUID().toString();
        Identity identity = new Identity("c".repeat(64), "att_" + UUID.randomUUID(),
                                         new DecisionKey("authorization", id));
        Claim.Acquired claim = (Claim.Acquired) store.claim(key, List.of(identity), LEASE, Quota.UNLIMITED);
        String body = "{\"id\":\"" + id + "\",\"status\":\"APPROVED\",\"merchantId\":\"" + merchant + "\","
                      + "\"reference\":\"order-42\",\"amount\":{\"value\":1299,\"currency\":\"EUR\"},"
                      + "\"card\":{\"brand\":\"visa\",\"last4\":\"1111\"},\"createdAt\":\"2026-11-30T20:38:51.378Z\","
                      + "\"state\":\"APPROVED\",\"capturedAmount\":{\"value\":0,\"currency\":\"EUR\"},\"captures\":[],"
                      + "\"expiresAt\":\"2026-12-07T20:38:51.378Z\",\"updatedAt\":\"2026-11-30T20:38:51.378Z\"}";
        store.recordAndComplete(key, identity, claim.token(),
                                new Decision(identity.decision(), body.getBytes(StandardCharsets.UTF_8)), LEASE);
        assertThat(query("SELECT attempt_id || ' ' || merchant || ' ' || amount || ' ' || state || ' ' || last_four "
                         + "|| ' ' || (expires_at - created_at) FROM authorizations WHERE id = '" + id + "'"),
                   is(identity.attemptId() + " " + merchant + " 1299 APPROVED 1111 7 days"));
    }

    private static List<Claim> claimConcurrently(String merchant, int requests, Quota quota) throws Exception {
        CountDownLatch start = new CountDownLatch(1);
        List<Future<Claim>> futures = new ArrayList<>();
        try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int i = 0; i < requests; i++) {
                String key = keyOf(merchant);
                Identity identity = identity();
                futures.add(threads.submit(() -> {
                    start.await();
                    return store.claim(key, List.of(identity), LEASE, quota);
                }));
            }
            start.countDown();
            List<Claim> claims = new ArrayList<>();
            for (Future<Claim> future : futures) {
                claims.add(future.get());
            }
            return claims;
        }
    }

    private static Identity identity() {
        String id = UUID.randomUUID().toString();
        return new Identity(id.replace("-", "").repeat(2), "att_" + id, new DecisionKey("quota-test", id));
    }

    // The identity a claim was made with, rebuilt from the fingerprint its record holds (see identity()).
    private static Identity identity(Claim.Acquired claim) throws SQLException {
        String fingerprint = query("SELECT fingerprint FROM idempotency_records WHERE lookup_key = '"
                                   + claim.lookupKey().replace("'", "''") + "'");
        String id = fingerprint.substring(0, 32).replaceFirst("(.{8})(.{4})(.{4})(.{4})(.{12})", "$1-$2-$3-$4-$5");
        return new Identity(fingerprint, "att_" + id, new DecisionKey("quota-test", id));
    }

    private static List<Claim.Acquired> acquired(List<Claim> claims) {
        return claims.stream().filter(Claim.Acquired.class::isInstance).map(Claim.Acquired.class::cast).toList();
    }

    private static String keyOf(String merchant) {
        return RequestIdentities.lookupKey("authorize", merchant, new IdempotencyKey(UUID.randomUUID().toString()));
    }

    private static byte[] body() {
        return "{\"decided\":true}".getBytes(StandardCharsets.UTF_8);
    }

    // In flight and records, as the quota check sums them.
    private static String counts(String merchant) throws SQLException {
        return query("SELECT in_flight || ' ' || records FROM merchant_quota_counts WHERE merchant = '" + merchant
                     + "'");
    }

    // In flight and records, counted from the rows themselves.
    private static String rows(String merchant) throws SQLException {
        return query("SELECT count(*) FILTER (WHERE state = 'in_flight') || ' ' || count(*) FROM idempotency_records "
                     + "WHERE merchant = '" + merchant + "'");
    }

    private static String query(String sql) throws SQLException {
        return POSTGRES.query(sql);
    }
}
