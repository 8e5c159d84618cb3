package com.example.payments.authorization;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

import com.example.payments.idempotency.Claim;
import com.example.payments.idempotency.IdempotencyKey;
import com.example.payments.idempotency.IdempotencyRegistry;
import com.example.payments.idempotency.Identity;
import com.example.payments.idempotency.InMemoryIdempotencyStore;
import com.example.payments.idempotency.InMemoryKeyBindings;
import com.example.payments.idempotency.Quota;
import com.example.payments.idempotency.RequestIdentities;
import com.example.payments.issuer.IssuerSettings;

import io.helidon.metrics.api.MeterRegistry;
import io.helidon.metrics.api.MetricsFactory;
import io.helidon.service.registry.Services;

import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.contains;
import static org.hamcrest.Matchers.everyItem;
import static org.hamcrest.Matchers.hasSize;
import static org.hamcrest.Matchers.is;

/**
 * The reconciler on its own, in memory: a reversal the acquirer does not confirm is sent again under the same reversal
 * id (the key released in between, the outcome kept) until it is confirmed; a key another request took is reversed
 * without a decision under it; a run skips outcomes before their deadline.
 */
class ReconcilerTest {

    private static final String MERCHANT = "m_reconciler";

    private final MeterRegistry meters = Services.get(MetricsFactory.class).globalRegistry();
    private final RequestIdentities identities = RequestIdentities.create("reconciler-test-secret", Optional.empty());
    private final List<String> reversalIds = Collections.synchronizedList(new ArrayList<>());
    private volatile int failuresLeft;

    private final Authorizer acquirer = new Authorizer() {
        @Override
        public Decision authorize(AuthorizationAttempt attempt) {
            return Decision.approve(Instant.now());
        }

        @Override
        public Decision reverse(Reversal reversal) throws IssuerUnavailableException {
            reversalIds.add(reversal.reversalId());
            if (failuresLeft-- > 0) {
                throw new IssuerUnavailableException("acquirer down");
            }
            return Decision.approve(Instant.now());
        }

        @Override
        public boolean blocks() {
            return false;
        }
    };

    private final InMemoryUnknownOutcomes outcomes = InMemoryUnknownOutcomes.create(100);
    private final InMemoryAuthorizationStore store = InMemoryAuthorizationStore.create(100);
    private final InMemoryKeyBindings bindings = InMemoryKeyBindings.create(100);

    @Test
    void anUnconfirmedReversalIsSentAgainUnderTheSameIdUntilConfirmed() throws Exception {
        failuresLeft = Reversals.SENDS_PER_RUN;
        try (IdempotencyRegistry registry = registry(); BoundedAuthorizer bounded = bounded()) {
            Reconciler reconciler = reconciler(registry, bounded);
            UnknownOutcome outcome = outcome(Instant.now());
            outcomes.record(outcome);

            assertThat(reconciler.reconcile(outcome), is(Reconciler.Action.WAITING));
            assertThat("kept for the next run", outcomes.due(Instant.now(), 10), hasSize(1));
            Claim retry = registry.claim(outcome.lookupKey(), List.of(outcome.identity()));
            assertThat("the key was released: a retry may run", retry instanceof Claim.Acquired, is(true));
            registry.release((Claim.Acquired) retry, IdempotencyRegistry.ReleaseReason.ISSUER_TIMEOUT);
        }
        try (IdempotencyRegistry registry = registry(); BoundedAuthorizer bounded = bounded()) {
            // Another replica (or this one after a restart) takes it up from the durable record.
            Reconciler reconciler = reconciler(registry, bounded);
            UnknownOutcome outcome = outcomes.due(Instant.now(), 10).getFirst();
            assertThat(reconciler.reconcile(outcome), is(Reconciler.Action.REVERSED));
            assertThat(reversalIds, hasSize(Reversals.SENDS_PER_RUN + 1));
            assertThat("one reversal id for every send", reversalIds, everyItem(is(reversalIds.getFirst())));
            assertThat(store.find(outcome.resourceId()).orElseThrow().state(), is(AuthorizationState.REVERSED));
            assertThat(outcomes.due(Instant.now(), 10), hasSize(0));
        }
    }

    @Test
    void aRunResolvesOnlyOutcomesPastTheirDeadline() throws Exception {
        try (IdempotencyRegistry registry = registry(); BoundedAuthorizer bounded = bounded()) {
            Reconciler reconciler = reconciler(registry, bounded);
            UnknownOutcome due = outcome(Instant.now().minusSeconds(1));
            UnknownOutcome waiting = outcome(Instant.now().plusSeconds(60));
            outcomes.record(due);
            outcomes.record(waiting);

            reconciler.run();

            assertThat(store.find(due.resourceId()).orElseThrow().state(), is(AuthorizationState.REVERSED));
            assertThat(store.find(waiting.resourceId()).isPresent(), is(false));
            assertThat(outcomes.due(Instant.now().plusSeconds(120), 10).stream().map(UnknownOutcome::attemptId)
                               .toList(), contains(waiting.attemptId()));
        }
    }

    private IdempotencyRegistry registry() {
        return IdempotencyRegistry.create(sharedStore, Duration.ofSeconds(10), Duration.ofHours(1),
                                          Duration.ZERO, Quota.UNLIMITED, meters);
    }

    private final InMemoryIdempotencyStore sharedStore = InMemoryIdempotencyStore.create(100);

    private BoundedAuthorizer bounded() {
        return new BoundedAuthorizer(acquirer, Duration.ofSeconds(1), meters);
    }

    private Reconciler reconciler(IdempotencyRegistry registry, BoundedAuthorizer bounded) {
        AuthorizerSettings settings = new AuthorizerSettings(Duration.ofSeconds(1), AuthorizerSettings.Type.HTTP,
                Optional.empty(), new IssuerSettings(1_000_000, Duration.ZERO, Duration.ZERO, Duration.ofHours(1), 10),
                Duration.ofSeconds(1));
        return Reconciler.create(outcomes, registry, bindings, store, bounded, settings, Clock.systemUTC(), 10,
                                 meters);
    }

    private UnknownOutcome outcome(Instant reverseAt) {
        IdempotencyKey key = IdempotencyKey.parse(UUID.randomUUID().toString()).orElseThrow();
        Identity identity = identities.of("authorize", UnknownOutcome.KIND, MERCHANT, key, "body").getFirst();
        Instant now = Instant.now().truncatedTo(ChronoUnit.MILLIS);
        return new UnknownOutcome(identity.attemptId(), RequestIdentities.lookupKey("authorize", MERCHANT, key),
                MERCHANT, identity.fingerprint(), identity.decision().id(), "order-1", new Amount(1299, "EUR"),
                new Authorization.CardSummary("visa", "1111"), now, reverseAt.truncatedTo(ChronoUnit.MILLIS));
    }
}
