package com.example.payments.authorization;

import java.time.Clock;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

import com.example.payments.idempotency.Claim;
import com.example.payments.idempotency.IdempotencyKey;
import com.example.payments.idempotency.IdempotencyRegistry;
import com.example.payments.idempotency.InMemoryIdempotencyStore;

import io.helidon.metrics.api.MeterRegistry;
import io.helidon.metrics.api.MetricsFactory;
import io.helidon.service.registry.Services;
import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.instanceOf;
import static org.hamcrest.Matchers.is;

/**
 * Once the issuer has decided, no failure of the stores may let a retry reach the authorizer again.
 */
class AuthorizationProcessorTest {

    private static final AuthorizationRequest REQUEST = new AuthorizationRequest(
            "m_123", "order-42", new Amount(1299, "EUR"), new Card("4111111111111111", 12, 2030, "123"));

    /** A store that fails the way a forked relational store might: with an unexpected runtime exception. */
    static final class BrokenStore implements AuthorizationStore {
        @Override
        public void save(Authorization authorization) {
            throw new IllegalStateException("simulated constraint violation");
        }

        @Override
        public Optional<Authorization> find(String id) {
            return Optional.empty();
        }
    }

    @Test
    void aStoreThatThrowsAfterTheDecisionStillAnswersTheDecisionAndTheRetryReplays() throws Exception {
        MeterRegistry meters = Services.get(MetricsFactory.class).globalRegistry();
        AtomicInteger calls = new AtomicInteger();
        Authorizer counting = attempt -> {
            calls.incrementAndGet();
            return Authorizer.Decision.approve();
        };
        try (IdempotencyRegistry registry = IdempotencyRegistry.create(InMemoryIdempotencyStore.create(10),
                Duration.ofSeconds(10), Duration.ofHours(1), meters);
             AuthorizationProcessor processor = new AuthorizationProcessor(registry,
                     new BoundedAuthorizer(counting, Duration.ofSeconds(1), meters), new BrokenStore(),
                     Clock.systemUTC(), meters)) {
            IdempotencyKey key = new IdempotencyKey("order-42");
            Claim claim = registry.claim("m_123", key, "fingerprint");
            AuthorizationProcessor.Result result = processor.process((Claim.Acquired) claim, REQUEST, key);

            assertThat(result, instanceOf(AuthorizationProcessor.Authorized.class));
            assertThat(registry.heldCount(), is(0));
            // Nothing is left for the shutdown to release, and the retry replays instead of authorizing again.
            assertThat(registry.releaseAllHeld(IdempotencyRegistry.ReleaseReason.SHUTDOWN), is(0));
            assertThat(registry.claim("m_123", key, "fingerprint"), instanceOf(Claim.Replay.class));
            assertThat(calls.get(), is(1));
        }
    }
}
