package com.example.payments.idempotency;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.instanceOf;
import static org.hamcrest.Matchers.is;

/**
 * The contract every {@link IdempotencyStore} keeps (see its javadoc), run unchanged against each backend by a
 * subclass that says how to get a store. Each test uses keys of its own, so a backend may share one store (one Redis)
 * across tests. A PostgreSQL backend passes the same suite.
 */
abstract class IdempotencyStoreContract {

    static final Duration LONG = Duration.ofSeconds(30);
    static final Duration SHORT = Duration.ofMillis(200);
    /** How long past its end a lapsed lease may still be seen held before a test fails (generous: busy CI cores). */
    static final Duration LAPSE_BOUND = Duration.ofSeconds(10);

    /**
     * The backend under test.
     *
     * @return a store
     */
    abstract IdempotencyStore store();

    private final String key = RequestIdentities.lookupKey("authorize", "m_123",
                                                           new IdempotencyKey(UUID.randomUUID().toString()));
    private final Identity request = identity("a");
    private final Identity other = identity("b");

    static Identity identity(String fingerprintChar) {
        return new Identity(fingerprintChar.repeat(64), "att_" + fingerprintChar.repeat(32),
                            new DecisionKey("authorization", UUID.randomUUID().toString()));
    }

    static Decision decision(Identity identity, String text) {
        byte[] body = new byte[256 + text.length()];
        // Every byte value, so a backend that treats bodies as text (or stops at NUL) fails.
        for (int i = 0; i < 256; i++) {
            body[i] = (byte) i;
        }
        System.arraycopy(text.getBytes(java.nio.charset.StandardCharsets.UTF_8), 0, body, 256, text.length());
        return new Decision(identity.decision(), body);
    }

    /**
     * Lets the store drop what has expired, where it relies on a background sweep for that (in memory: the retention
     * sweeper); a no-op for stores that expire records themselves.
     */
    void sweep() {
    }

    private Claim claim(String lookupKey, List<Identity> identities, Duration lease) {
        return store().claim(lookupKey, identities, lease, Quota.UNLIMITED);
    }

    private Claim claim(String lookupKey, Identity identity, Quota quota) {
        return store().claim(lookupKey, List.of(identity), LONG, quota);
    }

    // A merchant of its own per test, so that stores shared by the tests (one Redis) keep separate counts.
    private static String merchant() {
        return "m_" + UUID.randomUUID();
    }

    private static String keyOf(String merchant) {
        return RequestIdentities.lookupKey("authorize", merchant, new IdempotencyKey(UUID.randomUUID().toString()));
    }

    private Claim.Acquired acquire(Identity identity, Duration lease) {
        return (Claim.Acquired) claim(key, List.of(identity), lease);
    }

    // Claims the key with a LONG lease as soon as the short lease holding it has lapsed: polls (a claim of a held key
    // changes nothing) rather than trusting one sleep, for stores whose clock is another process's (Redis, PostgreSQL).
    private Claim.Acquired acquireOnceLapsed(Identity identity) throws InterruptedException {
        long deadline = System.nanoTime() + LAPSE_BOUND.toNanos();
        while (true) {
            Claim claim = claim(key, List.of(identity), LONG);
            if (claim instanceof Claim.Acquired acquired) {
                return acquired;
            }
            assertThat("still held " + LAPSE_BOUND.toMillis() + " ms after a " + SHORT.toMillis() + " ms lease",
                       System.nanoTime() - deadline < 0, is(true));
            assertThat(claim, is(new Claim.InFlight()));
            Thread.sleep(50);
        }
    }

    @Test
    void theFirstClaimAcquiresTheKeyWithAToken() {
        Claim claim = claim(key, List.of(request), LONG);
        assertThat(claim, instanceOf(Claim.Acquired.class));
        assertThat(((Claim.Acquired) claim).lookupKey(), is(key));
        assertThat(((Claim.Acquired) claim).token(), greaterThan(0L));
        assertThat(((Claim.Acquired) claim).identity(), is(0));
    }

    @Test
    void concurrentClaimsOnOneKeyHaveExactlyOneWinner() throws Exception {
        int claimants = 64;
        CountDownLatch start = new CountDownLatch(1);
        List<Future<Claim>> claims = new ArrayList<>();
        try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int i = 0; i < claimants; i++) {
                Callable<Claim> claim = () -> {
                    start.await();
                    return claim(key, List.of(request), LONG);
                };
                claims.add(threads.submit(claim));
            }
            start.countDown();
            int acquired = 0;
            int inFlight = 0;
            for (Future<Claim> claim : claims) {
                switch (claim.get()) {
                case Claim.Acquired a -> acquired++;
                case Claim.InFlight f -> inFlight++;
                default -> throw new AssertionError("Unexpected " + claim.get());
                }
            }
            assertThat(acquired, is(1));
            assertThat(inFlight, is(claimants - 1));
        }
    }

    @Test
    void aKeyInFlightAnswersInFlightToTheSameRequestAndMismatchToAnother() {
        acquire(request, LONG);
        assertThat(claim(key, List.of(request), LONG), is(new Claim.InFlight()));
        assertThat(claim(key, List.of(other), LONG), is(new Claim.Mismatch()));
    }

    @Test
    void aRecordedDecisionCompletesTheKeyAndIsReplayedByteForByte() {
        Claim.Acquired claim = acquire(request, LONG);
        Decision decision = decision(request, "first");
        Recorded recorded = store().recordAndComplete(key, request, claim.token(), decision, LONG);
        assertThat(recorded, is(new Recorded(decision, true, true)));
        assertThat(claim(key, List.of(request), LONG), is(new Claim.Replay(decision, false)));
        assertThat(store().findDecision(request.decision()).orElseThrow(), is(decision));
        assertThat(claim(key, List.of(other), LONG), is(new Claim.Mismatch()));
    }

    @Test
    void aSecondDecisionForTheSameAttemptLosesToTheFirst() {
        Claim.Acquired claim = acquire(request, LONG);
        Decision first = decision(request, "first");
        store().recordAndComplete(key, request, claim.token(), first, LONG);
        Recorded second = store().recordAndComplete(key, request, claim.token(), decision(request, "second"), LONG);
        assertThat(second.winner(), is(first));
        assertThat(second.inserted(), is(false));
        assertThat(second.completed(), is(false));
        assertThat(store().findDecision(request.decision()).orElseThrow(), is(first));
    }

    @Test
    void onlyTheTokenHolderCanRenewOrRelease() {
        Claim.Acquired claim = acquire(request, LONG);
        assertThat(store().renew(key, claim.token() + 1, LONG), is(false));
        assertThat(store().release(key, claim.token() - 1), is(false));
        assertThat(claim(key, List.of(request), LONG), is(new Claim.InFlight()));
        assertThat(store().renew(key, claim.token(), LONG), is(true));
        assertThat(store().release(key, claim.token()), is(true));
    }

    @Test
    void anotherTokenCannotCompleteAKeyButItsDecisionIsRecordedAndRecovered() {
        Claim.Acquired claim = acquire(request, LONG);
        Decision stale = decision(request, "stale");
        Recorded recorded = store().recordAndComplete(key, request, claim.token() + 1, stale, LONG);
        assertThat(recorded, is(new Recorded(stale, true, false)));
        // Every claim looks for a recorded decision first: the key is completed with it, even while it is held.
        assertThat(claim(key, List.of(request), LONG), is(new Claim.Replay(stale, true)));
        assertThat(claim(key, List.of(request), LONG), is(new Claim.Replay(stale, false)));
        Recorded holder = store().recordAndComplete(key, request, claim.token(), decision(request, "late"), LONG);
        assertThat(holder.winner(), is(stale));
        assertThat(holder.completed(), is(false));
    }

    @Test
    void aReleasedKeyCanBeClaimedAgainWithAGreaterToken() {
        Claim.Acquired first = acquire(request, LONG);
        assertThat(store().release(key, first.token()), is(true));
        Claim.Acquired second = (Claim.Acquired) claim(key, List.of(other), LONG);
        assertThat(second.token(), greaterThan(first.token()));
    }

    @Test
    void aCompletedKeyCanNeitherBeRenewedNorReleased() {
        Claim.Acquired claim = acquire(request, LONG);
        Decision decision = decision(request, "done");
        store().recordAndComplete(key, request, claim.token(), decision, LONG);
        assertThat(store().renew(key, claim.token(), LONG), is(false));
        assertThat(store().release(key, claim.token()), is(false));
        assertThat(claim(key, List.of(request), LONG), is(new Claim.Replay(decision, false)));
    }

    @Test
    void operationsOnAnUnknownKeyChangeNothing() {
        assertThat(store().renew(key, 1, LONG), is(false));
        assertThat(store().release(key, 1), is(false));
        assertThat(store().findDecision(request.decision()).isPresent(), is(false));
        assertThat(claim(key, List.of(request), LONG), instanceOf(Claim.Acquired.class));
    }

    @Test
    void anExpiredLeaseLetsAnotherClaimWithAGreaterTokenAndFencesTheOldOwner() throws InterruptedException {
        Claim.Acquired lapsed = acquire(request, SHORT);
        Thread.sleep(2 * SHORT.toMillis());
        Claim.Acquired taker = acquireOnceLapsed(request);
        assertThat(taker.token(), greaterThan(lapsed.token()));
        assertThat(store().renew(key, lapsed.token(), LONG), is(false));
        assertThat(store().release(key, lapsed.token()), is(false));

        // Both executions of one attempt converge on the decision recorded first.
        Decision old = decision(request, "lapsed owner");
        assertThat(store().recordAndComplete(key, request, lapsed.token(), old, LONG),
                   is(new Recorded(old, true, false)));
        Recorded current = store().recordAndComplete(key, request, taker.token(), decision(request, "taker"), LONG);
        assertThat(current, is(new Recorded(old, false, true)));
        assertThat(claim(key, List.of(request), LONG), is(new Claim.Replay(old, false)));
    }

    @Test
    void aLapsedOwnerWhoseKeyNobodyTookStillCompletesIt() throws InterruptedException {
        Claim.Acquired lapsed = acquire(request, SHORT);
        Thread.sleep(2 * SHORT.toMillis());
        Decision decision = decision(request, "late but alone");
        assertThat(store().recordAndComplete(key, request, lapsed.token(), decision, LONG),
                   is(new Recorded(decision, true, true)));
        assertThat(claim(key, List.of(request), LONG), is(new Claim.Replay(decision, false)));
    }

    // Wide windows, so that two busy cores cannot flip the outcome: the renewal has the whole first lease (2 s) to
    // reach the store, and the key is looked at once that first lease is long over but far before the renewed one
    // (30 s) ends.
    @Test
    void renewingExtendsTheLeaseOfTheHolderOnly() throws InterruptedException {
        Duration first = Duration.ofSeconds(2);
        Claim.Acquired claim = acquire(request, first);
        assertThat(store().renew(key, claim.token() - 1, LONG), is(false));
        assertThat(store().renew(key, claim.token(), LONG), is(true));
        Thread.sleep(first.toMillis() + 500);
        assertThat(claim(key, List.of(request), LONG), is(new Claim.InFlight()));
    }

    @Test
    void aDecisionAndItsKeyAreForgottenAfterTheRetention() throws InterruptedException {
        Claim.Acquired claim = acquire(request, LONG);
        store().recordAndComplete(key, request, claim.token(), decision(request, "short"), SHORT);
        Thread.sleep(2 * SHORT.toMillis());
        long deadline = System.nanoTime() + LAPSE_BOUND.toNanos();
        while (store().findDecision(request.decision()).isPresent() && System.nanoTime() - deadline < 0) {
            Thread.sleep(50);
        }
        assertThat(store().findDecision(request.decision()).isPresent(), is(false));
        assertThat(claim(key, List.of(other), LONG), instanceOf(Claim.Acquired.class));
    }

    @Test
    void duringARotationAKeyRecordedUnderThePreviousSecretReplaysRecoversAndStaysInFlight() {
        Identity previous = identity("c");
        Identity current = identity("d");
        Claim.Acquired claim = acquire(previous, LONG);
        assertThat(claim(key, List.of(current, previous), LONG), is(new Claim.InFlight()));
        Decision decision = decision(previous, "before the rotation");
        store().recordAndComplete(key, previous, claim.token(), decision, LONG);
        assertThat(claim(key, List.of(current, previous), LONG), is(new Claim.Replay(decision, false)));
        assertThat(claim(key, List.of(current, identity("e")), LONG), is(new Claim.Mismatch()));
    }

    @Test
    void aDecisionRecordedWithoutItsKeyIsRecoveredByTheNextClaim() {
        Decision decision = decision(request, "orphan");
        // A lapsed owner whose key nobody took: recording an absent key completes it.
        store().recordAndComplete(key, request, 42, decision, LONG);
        String otherKey = key + "-same-attempt";
        assertThat(claim(otherKey, List.of(request), LONG), is(new Claim.Replay(decision, true)));
    }

    @Test
    void keysOf255PrintableAsciiCharactersWork() {
        StringBuilder printable = new StringBuilder();
        for (int i = 0; printable.length() < IdempotencyKey.MAX_LENGTH; i++) {
            printable.append((char) (0x20 + i % 95));
        }
        String longKey = RequestIdentities.lookupKey("authorize", "m:1", new IdempotencyKey(printable.toString()));
        Claim.Acquired claim = (Claim.Acquired) claim(longKey, List.of(request), LONG);
        Decision decision = decision(request, "long key");
        store().recordAndComplete(longKey, request, claim.token(), decision, LONG);
        assertThat(claim(longKey, List.of(request), LONG), is(new Claim.Replay(decision, false)));
    }

    @Test
    void keysOfDifferentMerchantsAndOperationsAreIndependent() {
        IdempotencyKey idempotencyKey = new IdempotencyKey(UUID.randomUUID().toString());
        String merchant = RequestIdentities.lookupKey("authorize", "m_123", idempotencyKey);
        String otherMerchant = RequestIdentities.lookupKey("authorize", "m_456", idempotencyKey);
        String otherOperation = RequestIdentities.lookupKey("capture", "m_123", idempotencyKey);
        claim(merchant, List.of(request), LONG);
        assertThat(claim(otherMerchant, List.of(other), LONG), instanceOf(Claim.Acquired.class));
        assertThat(claim(otherOperation, List.of(identity("e")), LONG), instanceOf(Claim.Acquired.class));
    }

    @Test
    void aMerchantAtItsInFlightQuotaIsRefusedANewKeyWhileAnotherMerchantIsNot() {
        Quota quota = new Quota(2, 10);
        String merchant = merchant();
        assertThat(claim(keyOf(merchant), request, quota), instanceOf(Claim.Acquired.class));
        assertThat(claim(keyOf(merchant), request, quota), instanceOf(Claim.Acquired.class));
        assertThat(claim(keyOf(merchant), request, quota), is(new Claim.OverQuota(Quota.Limit.IN_FLIGHT)));
        assertThat(claim(keyOf(merchant()), request, quota), instanceOf(Claim.Acquired.class));
    }

    @Test
    void aCompletedKeyFreesItsInFlightSlotAndKeepsCountingAsARecord() {
        Quota quota = new Quota(1, 2);
        String merchant = merchant();
        for (int i = 0; i < 2; i++) {
            String lookupKey = keyOf(merchant);
            Identity identity = identity(String.valueOf(i));
            Claim.Acquired claim = (Claim.Acquired) claim(lookupKey, identity, quota);
            store().recordAndComplete(lookupKey, identity, claim.token(), decision(identity, "done"), LONG);
        }
        assertThat(claim(keyOf(merchant), request, quota), is(new Claim.OverQuota(Quota.Limit.RECORDS)));
    }

    @Test
    void aReleasedKeyCountsNoLonger() {
        Quota quota = new Quota(1, 1);
        String merchant = merchant();
        String first = keyOf(merchant);
        Claim.Acquired claim = (Claim.Acquired) claim(first, request, quota);
        assertThat(claim(keyOf(merchant), request, quota), is(new Claim.OverQuota(Quota.Limit.IN_FLIGHT)));
        assertThat(store().release(first, claim.token()), is(true));
        assertThat(claim(keyOf(merchant), request, quota), instanceOf(Claim.Acquired.class));
    }

    @Test
    void aMerchantAtItsQuotaStillGetsReplaysInFlightAndMismatchAnswers() {
        Quota quota = new Quota(1, 1);
        String merchant = merchant();
        String lookupKey = keyOf(merchant);
        Claim.Acquired claim = (Claim.Acquired) claim(lookupKey, request, quota);
        assertThat(claim(lookupKey, request, quota), is(new Claim.InFlight()));
        Decision decision = decision(request, "at quota");
        store().recordAndComplete(lookupKey, request, claim.token(), decision, LONG);
        assertThat(claim(lookupKey, request, quota), is(new Claim.Replay(decision, false)));
        assertThat(claim(lookupKey, other, quota), is(new Claim.Mismatch()));
        assertThat(claim(keyOf(merchant), other, quota), is(new Claim.OverQuota(Quota.Limit.RECORDS)));
    }

    @Test
    void recordingAndRecoveringADecisionAreNeverRefusedByTheQuota() {
        Quota quota = new Quota(1, 1);
        String merchant = merchant();
        String lookupKey = keyOf(merchant);
        Claim.Acquired claim = (Claim.Acquired) claim(lookupKey, request, quota);
        store().recordAndComplete(lookupKey, request, claim.token(), decision(request, "fills the quota"), LONG);
        // A lapsed owner whose key nobody took records its decision, over the quota: the issuer has decided.
        Identity orphan = identity("9");
        Decision late = decision(orphan, "late");
        String absent = keyOf(merchant);
        assertThat(store().recordAndComplete(absent, orphan, 42, late, LONG).completed(), is(true));
        assertThat(claim(absent, orphan, quota), is(new Claim.Replay(late, false)));
        String sameAttempt = absent + "-same-attempt";
        assertThat(claim(sameAttempt, orphan, quota), is(new Claim.Replay(late, true)));
    }

    @Test
    void recordsStopCountingWhenTheyExpire() throws InterruptedException {
        Quota quota = new Quota(1, 1);
        String merchant = merchant();
        assertThat(store().claim(keyOf(merchant), List.of(request), SHORT, quota), instanceOf(Claim.Acquired.class));
        Thread.sleep(2 * SHORT.toMillis());
        sweep();
        assertThat(claim(keyOf(merchant), request, quota), instanceOf(Claim.Acquired.class));
    }

    @Test
    void concurrentNewKeysOfOneMerchantNeverExceedItsQuota() throws Exception {
        Quota quota = new Quota(5, 100);
        String merchant = merchant();
        CountDownLatch start = new CountDownLatch(1);
        List<Future<Claim>> claims = new ArrayList<>();
        try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int i = 0; i < 32; i++) {
                String lookupKey = keyOf(merchant);
                claims.add(threads.submit(() -> {
                    start.await();
                    return claim(lookupKey, request, quota);
                }));
            }
            start.countDown();
            int acquired = 0;
            for (Future<Claim> claim : claims) {
                switch (claim.get()) {
                case Claim.Acquired a -> acquired++;
                case Claim.OverQuota o -> assertThat(o.limit(), is(Quota.Limit.IN_FLIGHT));
                default -> throw new AssertionError("Unexpected " + claim.get());
                }
            }
            assertThat(acquired, is(quota.maxInFlight()));
        }
    }
}
