package com.example.payments.authorization;

import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;

import com.example.payments.database.Database;
import com.example.payments.database.DatabaseSettings;
import com.example.payments.database.PostgresAuthorizationStore;
import com.example.payments.database.PostgresIdempotencyStore;
import com.example.payments.database.PostgresKeyBindings;
import com.example.payments.database.PostgresUnknownOutcomes;
import com.example.payments.http.Json;
import com.example.payments.idempotency.Claim;
import com.example.payments.idempotency.Decision;
import com.example.payments.idempotency.IdempotencyKey;
import com.example.payments.idempotency.IdempotencyRegistry;
import com.example.payments.idempotency.IdempotencyStore;
import com.example.payments.idempotency.Identity;
import com.example.payments.idempotency.InMemoryIdempotencyStore;
import com.example.payments.idempotency.InMemoryKeyBindings;
import com.example.payments.idempotency.KeyBindings;
import com.example.payments.idempotency.Quota;
import com.example.payments.idempotency.RequestIdentities;
import com.example.payments.issuer.IssuerSettings;
import com.example.payments.testing.PostgresServer;

import io.helidon.metrics.api.MeterRegistry;
import io.helidon.metrics.api.MetricsFactory;
import io.helidon.service.registry.Services;

import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.is;

/**
 * A client's retry and the reconciler reach one unknown outcome at the same instant, 100 times, on the in-memory
 * stores and on PostgreSQL: each time exactly one of them acts (the retry calls the issuer and records its decision,
 * or the reconciler reverses the attempt and records the reversal), the other gets 409 or replays, and the key ends
 * with the one decision of whoever acted. The retry is the idempotent operation's own sequence against the registry:
 * claim, bind, issuer call, resource, recorded decision.
 */
class ReconcilerRaceTest {

    private static final int ROUNDS = 100;
    private static final String MERCHANT = "m_race";

    private final AtomicInteger authorizations = new AtomicInteger();
    private final AtomicInteger reversals = new AtomicInteger();
    private final MeterRegistry meters = Services.get(MetricsFactory.class).globalRegistry();
    private final RequestIdentities identities = RequestIdentities.create("race-test-fingerprint-secret",
                                                                           Optional.empty());

    /** Decides at once, after a random pause of up to 2 ms so the two sides interleave differently each round. */
    private final Authorizer issuer = new Authorizer() {
        @Override
        public Decision authorize(AuthorizationAttempt attempt) throws InterruptedException {
            pause();
            authorizations.incrementAndGet();
            return Decision.approve(Instant.now());
        }

        @Override
        public Decision reverse(Reversal reversal) throws InterruptedException {
            pause();
            reversals.incrementAndGet();
            return Decision.approve(Instant.now());
        }

        private void pause() throws InterruptedException {
            Thread.sleep(java.time.Duration.ofNanos(ThreadLocalRandom.current().nextInt(2_000_000)));
        }
    };

    private enum Retry { ACTED, IN_FLIGHT, REPLAYED }

    @Test
    void inMemoryExactlyOneOfThemActsEachTime() throws Exception {
        race(InMemoryIdempotencyStore.create(10_000), InMemoryKeyBindings.create(10_000),
             InMemoryAuthorizationStore.create(10_000), InMemoryUnknownOutcomes.create(10_000));
    }

    @Test
    void onPostgresExactlyOneOfThemActsEachTime() throws Exception {
        PostgresServer.assumeInstalled();
        try (PostgresServer server = PostgresServer.start();
             Database database = Database.open(new DatabaseSettings(server.url(), Optional.of(PostgresServer.USER),
                     Optional.empty(), 8, Duration.ofSeconds(2), Duration.ofSeconds(1), Duration.ofSeconds(2),
                     Optional.empty()), Duration.ofDays(7), meters)) {
            awaitMigrated(database);
            race(PostgresIdempotencyStore.create(database, decision -> Optional.empty()),
                 PostgresKeyBindings.create(database), PostgresAuthorizationStore.create(database),
                 PostgresUnknownOutcomes.create(database));
        }
    }

    private void race(IdempotencyStore idempotency, KeyBindings bindings, AuthorizationStore store,
                      UnknownOutcomes outcomes) throws Exception {
        AuthorizerSettings settings = new AuthorizerSettings(Duration.ofSeconds(2), AuthorizerSettings.Type.HTTP,
                Optional.empty(), new IssuerSettings(1_000_000, Duration.ZERO, Duration.ZERO, Duration.ofHours(1), 10),
                Duration.ofSeconds(1));
        try (IdempotencyRegistry registry = IdempotencyRegistry.create(idempotency, Duration.ofSeconds(10),
                     Duration.ofHours(1), Duration.ofSeconds(1), Quota.UNLIMITED, meters);
             BoundedAuthorizer bounded = new BoundedAuthorizer(issuer, settings.timeout(), meters);
             ExecutorService threads = Executors.newFixedThreadPool(2)) {
            Reconciler reconciler = Reconciler.create(outcomes, registry, bindings, store, bounded, settings,
                                                      Clock.systemUTC(), 10, meters);
            int retriesActed = 0;
            int reconcilerActed = 0;
            for (int round = 0; round < ROUNDS; round++) {
                UnknownOutcome outcome = outcome();
                outcomes.record(outcome);
                int authorizedBefore = authorizations.get();
                int reversedBefore = reversals.get();
                CyclicBarrier start = new CyclicBarrier(2);
                Future<Reconciler.Action> reconciled = threads.submit(() -> {
                    start.await();
                    return reconciler.reconcile(outcome);
                });
                Future<Retry> retried = threads.submit(() -> {
                    start.await();
                    return retry(registry, bindings, store, outcome);
                });
                Retry retry = retried.get();
                Reconciler.Action action = reconciled.get();

                int authorized = authorizations.get() - authorizedBefore;
                int reversed = reversals.get() - reversedBefore;
                String round1 = "round " + round + ": retry " + retry + ", reconciler " + action;
                assertThat(round1 + ": exactly one acted", authorized + reversed, is(1));
                assertThat(round1, retry == Retry.ACTED, is(authorized == 1));
                assertThat(round1, action == Reconciler.Action.REVERSED, is(reversed == 1));
                // Whoever acted, the key now replays its decision, and the resource store agrees.
                Claim after = registry.claim(outcome.lookupKey(), List.of(outcome.identity()));
                assertThat(round1, after instanceof Claim.Replay, is(true));
                String body = new String(((Claim.Replay) after).decision().body(),
                                         java.nio.charset.StandardCharsets.UTF_8);
                assertThat(round1, body, containsString(reversed == 1 ? "\"declineCode\":\"reversed\""
                        : "\"status\":\"APPROVED\""));
                assertThat(round1, store.find(outcome.resourceId()).orElseThrow().state(),
                           is(reversed == 1 ? AuthorizationState.REVERSED : AuthorizationState.APPROVED));
                // A reconciler left waiting (the retry held the key) drops the outcome on its next run.
                if (action == Reconciler.Action.WAITING) {
                    assertThat(round1, reconciler.reconcile(outcome), is(Reconciler.Action.RETRIED));
                }
                retriesActed += authorized;
                reconcilerActed += reversed;
            }
            assertThat(retriesActed + reconcilerActed, is(ROUNDS));
            System.out.printf("%s: the retry acted %d times, the reconciler %d times%n",
                              idempotency.getClass().getSimpleName(), retriesActed, reconcilerActed);
            assertThat("resolved: nothing left to reverse", outcomes.due(Instant.now().plusSeconds(3600), 1000).size(),
                       is(0));
        }
    }

    // What IdempotentOperation does for a retry: claim, bind, the issuer call, the resource, the recorded decision.
    private Retry retry(IdempotencyRegistry registry, KeyBindings bindings, AuthorizationStore store,
                        UnknownOutcome outcome) throws Exception {
        Identity identity = outcome.identity();
        Claim claim = registry.claim(outcome.lookupKey(), List.of(identity));
        if (claim instanceof Claim.Replay) {
            return Retry.REPLAYED;
        }
        if (!(claim instanceof Claim.Acquired acquired)) {
            return Retry.IN_FLIGHT;
        }
        bindings.bind(acquired.lookupKey(), List.of(identity), 0);
        Authorizer.Decision decision = issuer.authorize(null);
        Instant at = decision.decidedAt().truncatedTo(ChronoUnit.MILLIS);
        AuthorizationRecord created = store.create(new AuthorizationRecord(outcome.resourceId(), outcome.attemptId(),
                outcome.merchantId(), outcome.reference(), outcome.amount(), outcome.card(), "APPROVED", null, at,
                AuthorizationState.APPROVED, 0, 0, false, List.of(), at.plus(Duration.ofDays(7)), at));
        registry.recordAndComplete(acquired, identity, new Decision(identity.decision(),
                                                                    Json.bytes(created.createdView())));
        return Retry.ACTED;
    }

    private UnknownOutcome outcome() {
        IdempotencyKey key = IdempotencyKey.parse(UUID.randomUUID().toString()).orElseThrow();
        String reference = "order-" + UUID.randomUUID();
        Identity identity = identities.of("authorize", UnknownOutcome.KIND, MERCHANT, key, reference).getFirst();
        Instant now = Instant.now().truncatedTo(ChronoUnit.MILLIS);
        return new UnknownOutcome(identity.attemptId(), RequestIdentities.lookupKey("authorize", MERCHANT, key),
                MERCHANT, identity.fingerprint(), identity.decision().id(), reference, new Amount(1299, "EUR"),
                new Authorization.CardSummary("visa", "1111"), now, now);
    }

    static void awaitMigrated(Database database) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (true) {
            try {
                database.call("migrated", connection -> 1);
                return;
            } catch (IdempotencyStore.UnavailableException e) {
                if (System.nanoTime() > deadline) {
                    throw new IOException("not migrated: " + e.getMessage());
                }
                Thread.sleep(100);
            }
        }
    }
}
