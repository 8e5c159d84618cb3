package com.example.payments.idempotency;

import java.nio.charset.StandardCharsets;
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
import static org.hamcrest.Matchers.instanceOf;
import static org.hamcrest.Matchers.is;

/**
 * The contract every {@link IdempotencyStore} keeps, run unchanged against each backend by a subclass that says how
 * to get a store. Each test uses keys of its own, so a backend may share one store (one Redis) across tests.
 */
abstract class IdempotencyStoreContract {

    static final Duration LONG = Duration.ofSeconds(30);
    static final String FINGERPRINT = "a".repeat(64);
    static final String OTHER_FINGERPRINT = "b".repeat(64);
    // Every byte value, so a backend that treats bodies as text (or stops at NUL) fails.
    static final byte[] BODY = allBytes();
    static final StoredResponse RESPONSE = new StoredResponse(201, "/v1/authorizations/42", "application/json", BODY);

    /**
     * The backend under test.
     *
     * @return a store
     */
    abstract IdempotencyStore store();

    private final String key = "m_123:" + UUID.randomUUID();

    @Test
    void firstClaimAcquiresTheKeyForItsOwner() {
        Claim claim = store().claim(key, FINGERPRINT, "owner-1", LONG);
        assertThat(claim, is(new Claim.Acquired(key, "owner-1")));
    }

    @Test
    void concurrentClaimsOnOneKeyHaveExactlyOneWinner() throws Exception {
        int claimants = 64;
        CountDownLatch start = new CountDownLatch(1);
        List<Future<Claim>> claims = new ArrayList<>();
        try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int i = 0; i < claimants; i++) {
                String owner = "owner-" + i;
                Callable<Claim> claim = () -> {
                    start.await();
                    return store().claim(key, FINGERPRINT, owner, LONG);
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
    void aKeyInFlightAnswersInFlightToAnotherRequestWithTheSameFingerprint() {
        store().claim(key, FINGERPRINT, "owner-1", LONG);
        assertThat(store().claim(key, FINGERPRINT, "owner-2", LONG), is(new Claim.InFlight()));
    }

    @Test
    void aDifferentFingerprintIsAMismatchWhileInFlight() {
        store().claim(key, FINGERPRINT, "owner-1", LONG);
        assertThat(store().claim(key, OTHER_FINGERPRINT, "owner-2", LONG), is(new Claim.Mismatch()));
    }

    @Test
    void aCompletedKeyReplaysTheStoredResponseByteForByte() {
        store().claim(key, FINGERPRINT, "owner-1", LONG);
        assertThat(store().complete(key, "owner-1", RESPONSE, LONG), is(true));
        assertThat(store().claim(key, FINGERPRINT, "owner-2", LONG), is(new Claim.Replay(RESPONSE)));
    }

    @Test
    void aResponseWithoutLocationReplaysWithoutLocation() {
        StoredResponse noLocation = new StoredResponse(200, null, "application/json", "{}".getBytes(
                StandardCharsets.UTF_8));
        store().claim(key, FINGERPRINT, "owner-1", LONG);
        store().complete(key, "owner-1", noLocation, LONG);
        assertThat(store().claim(key, FINGERPRINT, "owner-2", LONG), is(new Claim.Replay(noLocation)));
    }

    @Test
    void aDifferentFingerprintIsAMismatchOnceCompleted() {
        store().claim(key, FINGERPRINT, "owner-1", LONG);
        store().complete(key, "owner-1", RESPONSE, LONG);
        assertThat(store().claim(key, OTHER_FINGERPRINT, "owner-2", LONG), is(new Claim.Mismatch()));
    }

    @Test
    void onlyTheOwnerCanComplete() {
        store().claim(key, FINGERPRINT, "owner-1", LONG);
        assertThat(store().complete(key, "owner-2", RESPONSE, LONG), is(false));
        assertThat(store().claim(key, FINGERPRINT, "owner-3", LONG), is(new Claim.InFlight()));
    }

    @Test
    void onlyTheOwnerCanRelease() {
        store().claim(key, FINGERPRINT, "owner-1", LONG);
        assertThat(store().release(key, "owner-2"), is(false));
        assertThat(store().claim(key, FINGERPRINT, "owner-3", LONG), is(new Claim.InFlight()));
    }

    @Test
    void aReleasedKeyCanBeClaimedAgain() {
        store().claim(key, FINGERPRINT, "owner-1", LONG);
        assertThat(store().release(key, "owner-1"), is(true));
        assertThat(store().claim(key, OTHER_FINGERPRINT, "owner-2", LONG), is(new Claim.Acquired(key, "owner-2")));
    }

    @Test
    void aCompletedKeyCanNeitherBeReleasedNorCompletedAgain() {
        store().claim(key, FINGERPRINT, "owner-1", LONG);
        store().complete(key, "owner-1", RESPONSE, LONG);
        assertThat(store().release(key, "owner-1"), is(false));
        assertThat(store().complete(key, "owner-1", new StoredResponse(500, null, "text/plain", new byte[0]), LONG),
                   is(false));
        assertThat(store().claim(key, FINGERPRINT, "owner-2", LONG), is(new Claim.Replay(RESPONSE)));
    }

    @Test
    void operationsOnAnUnknownKeyChangeNothing() {
        assertThat(store().renew(key, "owner-1", LONG), is(false));
        assertThat(store().complete(key, "owner-1", RESPONSE, LONG), is(false));
        assertThat(store().release(key, "owner-1"), is(false));
        assertThat(store().claim(key, FINGERPRINT, "owner-2", LONG), instanceOf(Claim.Acquired.class));
    }

    @Test
    void anExpiredLeaseLetsAnotherOwnerClaimAndFencesTheOldOwner() throws InterruptedException {
        store().claim(key, FINGERPRINT, "owner-1", Duration.ofMillis(200));
        Thread.sleep(400);
        assertThat(store().claim(key, FINGERPRINT, "owner-2", LONG), is(new Claim.Acquired(key, "owner-2")));
        assertThat(store().complete(key, "owner-1", RESPONSE, LONG), is(false));
        assertThat(store().release(key, "owner-1"), is(false));
        assertThat(store().renew(key, "owner-1", LONG), is(false));
    }

    @Test
    void renewingExtendsTheLeaseOfTheOwnerOnly() throws InterruptedException {
        store().claim(key, FINGERPRINT, "owner-1", Duration.ofMillis(400));
        assertThat(store().renew(key, "owner-2", LONG), is(false));
        Thread.sleep(200);
        assertThat(store().renew(key, "owner-1", Duration.ofMillis(1500)), is(true));
        Thread.sleep(500);
        assertThat(store().claim(key, FINGERPRINT, "owner-3", LONG), is(new Claim.InFlight()));
    }

    @Test
    void aCompletedKeyCannotBeRenewed() {
        store().claim(key, FINGERPRINT, "owner-1", LONG);
        store().complete(key, "owner-1", RESPONSE, LONG);
        assertThat(store().renew(key, "owner-1", LONG), is(false));
    }

    @Test
    void aResponseIsForgottenAfterItsRetention() throws InterruptedException {
        store().claim(key, FINGERPRINT, "owner-1", LONG);
        store().complete(key, "owner-1", RESPONSE, Duration.ofMillis(200));
        Thread.sleep(400);
        assertThat(store().claim(key, OTHER_FINGERPRINT, "owner-2", LONG), is(new Claim.Acquired(key, "owner-2")));
    }

    @Test
    void keysOf255PrintableAsciiCharactersWork() {
        StringBuilder printable = new StringBuilder();
        for (int i = 0; printable.length() < IdempotencyKey.MAX_LENGTH; i++) {
            printable.append((char) (0x20 + i % 95));
        }
        String longKey = "m_123:" + UUID.randomUUID() + ":" + printable.substring(0, IdempotencyKey.MAX_LENGTH);
        assertThat(store().claim(longKey, FINGERPRINT, "owner-1", LONG), is(new Claim.Acquired(longKey, "owner-1")));
        assertThat(store().complete(longKey, "owner-1", RESPONSE, LONG), is(true));
        assertThat(store().claim(longKey, FINGERPRINT, "owner-2", LONG), is(new Claim.Replay(RESPONSE)));
    }

    @Test
    void keysOfDifferentMerchantsAreIndependent() {
        String otherMerchant = "m_456" + key.substring(key.indexOf(':'));
        store().claim(key, FINGERPRINT, "owner-1", LONG);
        assertThat(store().claim(otherMerchant, OTHER_FINGERPRINT, "owner-2", LONG),
                   is(new Claim.Acquired(otherMerchant, "owner-2")));
    }

    private static byte[] allBytes() {
        byte[] bytes = new byte[256];
        for (int i = 0; i < bytes.length; i++) {
            bytes[i] = (byte) i;
        }
        return bytes;
    }
}
