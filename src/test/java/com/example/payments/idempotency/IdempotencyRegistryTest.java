package com.example.payments.idempotency;

import java.time.Duration;
import java.util.List;
import java.util.UUID;

import io.helidon.metrics.api.Metrics;
import io.helidon.metrics.api.MetricsConfig;

import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.instanceOf;
import static org.hamcrest.Matchers.is;

/**
 * The registry's local view of a lease: the renewer's verdict and the monotonic deadline decide, without a round
 * trip, whether work may start.
 */
class IdempotencyRegistryTest {

    private final String key = RequestIdentities.lookupKey("authorize", "m_1",
                                                           new IdempotencyKey(UUID.randomUUID().toString()));
    private final List<Identity> request = List.of(IdempotencyStoreContract.identity("a"));

    private static IdempotencyRegistry registry(IdempotencyStore store, Duration lease) {
        return IdempotencyRegistry.create(store, lease, Duration.ofHours(1), Duration.ofMillis(100),
                                          Metrics.createMeterRegistry(MetricsConfig.create()));
    }

    @Test
    void aFreshLeaseCoversWorkShorterThanItAndNotWorkLonger() {
        try (IdempotencyRegistry registry = registry(InMemoryIdempotencyStore.create(10), Duration.ofSeconds(10))) {
            Claim.Acquired claim = (Claim.Acquired) registry.claim(key, request);
            assertThat(registry.leaseCovers(claim, Duration.ofSeconds(5)), is(true));
            assertThat("the recording must fit too", registry.leaseCovers(claim, Duration.ofMillis(9950)), is(false));
        }
    }

    @Test
    void aRenewalThatFindsTheLeaseLostStopsWorkFromStarting() {
        IdempotencyStore lostOnRenewal = new IdempotentOperationTest.ForwardingStore(InMemoryIdempotencyStore.create(10)) {
            @Override
            public boolean renew(String lookupKey, long token, Duration lease) {
                return false;
            }
        };
        try (IdempotencyRegistry registry = registry(lostOnRenewal, Duration.ofSeconds(10))) {
            Claim.Acquired claim = (Claim.Acquired) registry.claim(key, request);
            registry.renewHeld();
            assertThat(registry.leaseCovers(claim, Duration.ofSeconds(1)), is(false));
            assertThat("still held until released", registry.heldCount(), is(1));
        }
    }

    @Test
    void aRenewalThatFailsKeepsTheLeaseUntilItsLocalDeadline() throws InterruptedException {
        IdempotencyStore unreachable = new IdempotentOperationTest.ForwardingStore(InMemoryIdempotencyStore.create(10)) {
            @Override
            public boolean renew(String lookupKey, long token, Duration lease) {
                throw new UnavailableException("simulated", null);
            }
        };
        try (IdempotencyRegistry registry = registry(unreachable, Duration.ofMillis(600))) {
            Claim.Acquired claim = (Claim.Acquired) registry.claim(key, request);
            registry.renewHeld();
            assertThat(registry.leaseCovers(claim, Duration.ofMillis(100)), is(true));
            Thread.sleep(600);
            assertThat("past the local deadline", registry.leaseCovers(claim, Duration.ofMillis(100)), is(false));
        }
    }

    @Test
    void aReleasedOrRecordedKeyIsNoLongerHeld() {
        InMemoryIdempotencyStore store = InMemoryIdempotencyStore.create(10);
        try (IdempotencyRegistry registry = registry(store, Duration.ofSeconds(10))) {
            Claim.Acquired claim = (Claim.Acquired) registry.claim(key, request);
            assertThat(registry.release(claim, IdempotencyRegistry.ReleaseReason.ERROR), is(true));
            assertThat(registry.heldCount(), is(0));
            assertThat(registry.releasedCount(), is(1L));

            Claim.Acquired again = (Claim.Acquired) registry.claim(key, request);
            Decision decision = IdempotencyStoreContract.decision(request.getFirst(), "x");
            registry.recordAndComplete(again, request.getFirst(), decision);
            assertThat(registry.heldCount(), is(0));
            assertThat("a decided key is never released", registry.release(again,
                    IdempotencyRegistry.ReleaseReason.SHUTDOWN), is(false));
            assertThat(registry.claim(key, request), instanceOf(Claim.Replay.class));
        }
    }
}
