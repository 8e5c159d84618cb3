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

    private Claim.Acquired acquire(Identity identity, Duration lease) {
        return (Claim.Acquired) store().claim(key, List.of(identity), lease);
    }

    @Test
    void theFirstClaimAcquiresTheKeyWithAToken() {
        Claim claim = store().claim(key, List.of(request), LONG);
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
                    return store().claim(key, List.of(request), LONG);
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
        assertThat(store().claim(key, List.of(request), LONG), is(new Claim.InFlight()));
        assertThat(store().claim(key, List.of(other), LONG), is(new Claim.Mismatch()));
    }

    @Test
    void aRecordedDecisionCompletesTheKeyAndIsReplayedByteForByte() {
        Claim.Acquired claim = acquire(request, LONG);
        Decision decision = decision(request, "first");
        Recorded recorded = store().recordAndComplete(key, request, claim.token(), decision, LONG);
        assertThat(recorded, is(new Recorded(decision, true, true)));
        assertThat(store().claim(key, List.of(request), LONG), is(new Claim.Replay(decision, false)));
        assertThat(store().findDecision(request.decision()).orElseThrow(), is(decision));
        assertThat(store().claim(key, List.of(other), LONG), is(new Claim.Mismatch()));
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
        assertThat(store().claim(key, List.of(request), LONG), is(new Claim.InFlight()));
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
        assertThat(store().claim(key, List.of(request), LONG), is(new Claim.Replay(stale, true)));
        assertThat(store().claim(key, List.of(request), LONG), is(new Claim.Replay(stale, false)));
        Recorded holder = store().recordAndComplete(key, request, claim.token(), decision(request, "late"), LONG);
        assertThat(holder.winner(), is(stale));
        assertThat(holder.completed(), is(false));
    }

    @Test
    void aReleasedKeyCanBeClaimedAgainWithAGreaterToken() {
        Claim.Acquired first = acquire(request, LONG);
        assertThat(store().release(key, first.token()), is(true));
        Claim.Acquired second = (Claim.Acquired) store().claim(key, List.of(other), LONG);
        assertThat(second.token(), greaterThan(first.token()));
    }

    @Test
    void aCompletedKeyCanNeitherBeRenewedNorReleased() {
        Claim.Acquired claim = acquire(request, LONG);
        Decision decision = decision(request, "done");
        store().recordAndComplete(key, request, claim.token(), decision, LONG);
        assertThat(store().renew(key, claim.token(), LONG), is(false));
        assertThat(store().release(key, claim.token()), is(false));
        assertThat(store().claim(key, List.of(request), LONG), is(new Claim.Replay(decision, false)));
    }

    @Test
    void operationsOnAnUnknownKeyChangeNothing() {
        assertThat(store().renew(key, 1, LONG), is(false));
        assertThat(store().release(key, 1), is(false));
        assertThat(store().findDecision(request.decision()).isPresent(), is(false));
        assertThat(store().claim(key, List.of(request), LONG), instanceOf(Claim.Acquired.class));
    }

    @Test
    void anExpiredLeaseLetsAnotherClaimWithAGreaterTokenAndFencesTheOldOwner() throws InterruptedException {
        Claim.Acquired lapsed = acquire(request, SHORT);
        Thread.sleep(2 * SHORT.toMillis());
        Claim.Acquired taker = acquire(request, LONG);
        assertThat(taker.token(), greaterThan(lapsed.token()));
        assertThat(store().renew(key, lapsed.token(), LONG), is(false));
        assertThat(store().release(key, lapsed.token()), is(false));

        // Both executions of one attempt converge on the decision recorded first.
        Decision old = decision(request, "lapsed owner");
        assertThat(store().recordAndComplete(key, request, lapsed.token(), old, LONG),
                   is(new Recorded(old, true, false)));
        Recorded current = store().recordAndComplete(key, request, taker.token(), decision(request, "taker"), LONG);
        assertThat(current, is(new Recorded(old, false, true)));
        assertThat(store().claim(key, List.of(request), LONG), is(new Claim.Replay(old, false)));
    }

    @Test
    void aLapsedOwnerWhoseKeyNobodyTookStillCompletesIt() throws InterruptedException {
        Claim.Acquired lapsed = acquire(request, SHORT);
        Thread.sleep(2 * SHORT.toMillis());
        Decision decision = decision(request, "late but alone");
        assertThat(store().recordAndComplete(key, request, lapsed.token(), decision, LONG),
                   is(new Recorded(decision, true, true)));
        assertThat(store().claim(key, List.of(request), LONG), is(new Claim.Replay(decision, false)));
    }

    @Test
    void renewingExtendsTheLeaseOfTheHolderOnly() throws InterruptedException {
        Claim.Acquired claim = acquire(request, Duration.ofMillis(400));
        Thread.sleep(200);
        assertThat(store().renew(key, claim.token(), Duration.ofMillis(1500)), is(true));
        Thread.sleep(500);
        assertThat(store().claim(key, List.of(request), LONG), is(new Claim.InFlight()));
    }

    @Test
    void aDecisionAndItsKeyAreForgottenAfterTheRetention() throws InterruptedException {
        Claim.Acquired claim = acquire(request, LONG);
        store().recordAndComplete(key, request, claim.token(), decision(request, "short"), SHORT);
        Thread.sleep(2 * SHORT.toMillis());
        assertThat(store().findDecision(request.decision()).isPresent(), is(false));
        assertThat(store().claim(key, List.of(other), LONG), instanceOf(Claim.Acquired.class));
    }

    @Test
    void duringARotationAKeyRecordedUnderThePreviousSecretReplaysRecoversAndStaysInFlight() {
        Identity previous = identity("c");
        Identity current = identity("d");
        Claim.Acquired claim = acquire(previous, LONG);
        assertThat(store().claim(key, List.of(current, previous), LONG), is(new Claim.InFlight()));
        Decision decision = decision(previous, "before the rotation");
        store().recordAndComplete(key, previous, claim.token(), decision, LONG);
        assertThat(store().claim(key, List.of(current, previous), LONG), is(new Claim.Replay(decision, false)));
        assertThat(store().claim(key, List.of(current, identity("e")), LONG), is(new Claim.Mismatch()));
    }

    @Test
    void aDecisionRecordedWithoutItsKeyIsRecoveredByTheNextClaim() {
        Decision decision = decision(request, "orphan");
        // A lapsed owner whose key nobody took: recording an absent key completes it.
        store().recordAndComplete(key, request, 42, decision, LONG);
        String otherKey = key + "-same-attempt";
        assertThat(store().claim(otherKey, List.of(request), LONG), is(new Claim.Replay(decision, true)));
    }

    @Test
    void keysOf255PrintableAsciiCharactersWork() {
        StringBuilder printable = new StringBuilder();
        for (int i = 0; printable.length() < IdempotencyKey.MAX_LENGTH; i++) {
            printable.append((char) (0x20 + i % 95));
        }
        String longKey = RequestIdentities.lookupKey("authorize", "m:1", new IdempotencyKey(printable.toString()));
        Claim.Acquired claim = (Claim.Acquired) store().claim(longKey, List.of(request), LONG);
        Decision decision = decision(request, "long key");
        store().recordAndComplete(longKey, request, claim.token(), decision, LONG);
        assertThat(store().claim(longKey, List.of(request), LONG), is(new Claim.Replay(decision, false)));
    }

    @Test
    void keysOfDifferentMerchantsAndOperationsAreIndependent() {
        IdempotencyKey idempotencyKey = new IdempotencyKey(UUID.randomUUID().toString());
        String merchant = RequestIdentities.lookupKey("authorize", "m_123", idempotencyKey);
        String otherMerchant = RequestIdentities.lookupKey("authorize", "m_456", idempotencyKey);
        String otherOperation = RequestIdentities.lookupKey("capture", "m_123", idempotencyKey);
        store().claim(merchant, List.of(request), LONG);
        assertThat(store().claim(otherMerchant, List.of(other), LONG), instanceOf(Claim.Acquired.class));
        assertThat(store().claim(otherOperation, List.of(identity("e")), LONG), instanceOf(Claim.Acquired.class));
    }
}
