package com.example.payments.authorization;

import java.time.Clock;
import java.time.Duration;
import java.util.Optional;
import java.util.UUID;

import com.example.payments.database.Database;
import com.example.payments.database.DatabaseSettings;
import com.example.payments.database.PostgresAuthorizationStore;
import com.example.payments.database.PostgresUnknownOutcomes;
import com.example.payments.idempotency.IdempotencyKey;
import com.example.payments.idempotency.IdempotencyRegistry;
import com.example.payments.idempotency.Identity;
import com.example.payments.idempotency.InMemoryIdempotencyStore;
import com.example.payments.idempotency.InMemoryKeyBindings;
import com.example.payments.idempotency.Quota;
import com.example.payments.idempotency.RequestIdentities;
import com.example.payments.idempotency.Work;
import com.example.payments.issuer.IssuerRequest;
import com.example.payments.issuer.IssuerSettings;
import com.example.payments.issuer.IssuerStats;
import com.example.payments.issuer.SimulatedIssuer;
import com.example.payments.testing.PostgresServer;

import io.helidon.metrics.api.MeterRegistry;
import io.helidon.metrics.api.MetricsFactory;
import io.helidon.service.registry.Services;

import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.empty;
import static org.hamcrest.Matchers.hasSize;
import static org.hamcrest.Matchers.instanceOf;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.not;

/**
 * Authorizations against an acquirer that does not deduplicate attempt ids ({@code authorizer.acquirer-deduplicates:
 * false}), on the simulated issuer in that mode: a retry after an unknown outcome reverses the earlier attempt and
 * then authorizes under an attempt id of its own; a reversal not confirmed authorizes nothing (503); an attempt whose
 * replica died mid-call is found, recorded before its call, and reversed by the reconciler; an authorization written
 * by an execution that then froze is answered, not reversed; an execution whose
 * decision lost the race to another's is reversed by the reconciler. In every case the payment ends with at most one
 * approval net of reversals at the issuer. The killed execution and its retry once more on PostgreSQL (the records'
 * lookup by resource id, migration {@code V7}).
 */
class FreshAttemptsTest {

    private static final String MERCHANT = "m_123";

    /** The process dies during the issuer call (nothing after it runs). */
    private static final class Killed extends Error {
    }

    private final MeterRegistry meters = Services.get(MetricsFactory.class).globalRegistry();
    private final SimulatedIssuer issuer = SimulatedIssuer.create(
            new IssuerSettings(1_000_000, Duration.ZERO, Duration.ZERO, Duration.ofHours(1), 1000), meters, false);
    private volatile boolean answersLost;
    private volatile boolean killedAfterTheCall;
    private volatile boolean reversalsDown;

    private final Authorizer acquirer = new Authorizer() {
        @Override
        public Decision authorize(AuthorizationAttempt attempt) throws IssuerUnavailableException,
                InterruptedException {
            AuthorizationRequest r = attempt.request();
            SimulatedIssuer.Decided decided = (SimulatedIssuer.Decided) issuer.authorize(new IssuerRequest(
                    attempt.attemptId(), r.merchantId(), r.reference(), r.amount().value(), r.amount().currency(),
                    r.card().number()));
            if (killedAfterTheCall) {
                throw new Killed();
            }
            if (answersLost) {
                throw new IssuerUnavailableException("connection reset after the request was sent");
            }
            return decision(decided);
        }

        @Override
        public Decision reverse(Reversal reversal) throws IssuerUnavailableException, InterruptedException {
            if (reversalsDown) {
                throw new IssuerUnavailableException("acquirer down");
            }
            return decision(issuer.reverse(reversal.reversalId(), reversal.attemptId()));
        }

        @Override
        public boolean blocks() {
            return false;
        }
    };

    private final AuthorizerSettings settings = new AuthorizerSettings(Duration.ofSeconds(1),
            AuthorizerSettings.Type.HTTP, Optional.empty(),
            new IssuerSettings(1_000_000, Duration.ZERO, Duration.ZERO, Duration.ofHours(1), 10), Duration.ofSeconds(5),
            false);
    private UnknownOutcomes outcomes = InMemoryUnknownOutcomes.create(100);
    private AuthorizationStore store = InMemoryAuthorizationStore.create(100);
    private final BoundedAuthorizer bounded = new BoundedAuthorizer(acquirer, settings.timeout(), meters,
                                                                    new LateDecisions(Duration.ofSeconds(1),
                                                                                      Duration.ofSeconds(5)));
    private AuthorizeWork work = new AuthorizeWork(bounded, store, Duration.ofDays(7), meters, outcomes,
                                                         settings, Clock.systemUTC());
    private final IdempotencyKey key = IdempotencyKey.parse(UUID.randomUUID().toString()).orElseThrow();
    private final AuthorizationRequest request = new AuthorizationRequest(MERCHANT, "order-" + key.value(),
            new Amount(1299, "EUR"), new Card("4111111111111111", 12, 2030, "123"));
    private final Identity identity = RequestIdentities.create("fresh-attempts-test-secret", Optional.empty())
            .of("authorize", UnknownOutcome.KIND, MERCHANT, key, request.canonicalForm()).getFirst();
    private final String lookupKey = RequestIdentities.lookupKey("authorize", MERCHANT, key);

    @Test
    void aRetryAfterAnUnknownOutcomeReversesTheEarlierAttemptThenAuthorizesUnderItsOwn() throws Exception {
        answersLost = true;
        assertThat(execution(1), instanceOf(Work.Undecided.class));
        assertThat("approved at the issuer, unknown here", issuer.stats().approved(), is(1L));
        assertThat(outcomes.ofResource(identity.decision().id()), hasSize(1));

        answersLost = false;
        Work.Outcome retry = execution(2);

        assertThat(retry, instanceOf(Work.Decided.class));
        AuthorizationRecord stored = store.find(identity.decision().id()).orElseThrow();
        assertThat(stored.attemptId(), is(FreshAttempts.attemptId(identity.attemptId(), 2)));
        assertThat(stored.attemptId(), is(not(FreshAttempts.attemptId(identity.attemptId(), 1))));
        assertThat(stored.status(), is("APPROVED"));
        IssuerStats stats = issuer.stats();
        assertThat(stats.reversals(), is(1L));
        assertThat(stats.approved(), is(2L));
        assertThat(stats.paymentsApprovedTwiceNet(), is(0L));
        assertThat("nothing left for the reconciler", outcomes.ofResource(identity.decision().id()), is(empty()));
    }

    @Test
    void aRetryWhoseReversalIsNotConfirmedAuthorizesNothing() throws Exception {
        answersLost = true;
        execution(1);
        answersLost = false;
        reversalsDown = true;

        Work.Outcome retry = execution(2);

        assertThat(retry, instanceOf(Work.Undecided.class));
        assertThat(((Work.Undecided) retry).problem().status(), is(503));
        assertThat(((Work.Undecided) retry).retryAfterSeconds(), is(1L));
        assertThat("no second authorization", issuer.stats().approved(), is(1L));
        assertThat(outcomes.ofResource(identity.decision().id()), hasSize(1));
        assertThat(store.find(identity.decision().id()).isPresent(), is(false));
    }

    @Test
    void anAttemptWhoseReplicaDiedMidCallIsFoundAndReversedByTheReconciler() throws Exception {
        killedAfterTheCall = true;
        try {
            execution(1);
        } catch (Killed e) {
            // The replica is gone: nothing after the call ran.
        }
        assertThat(issuer.stats().approved(), is(1L));
        UnknownOutcome written = outcomes.ofResource(identity.decision().id()).getFirst();
        assertThat("recorded before the call", written.attemptId(),
                   is(FreshAttempts.attemptId(identity.attemptId(), 1)));

        try (IdempotencyRegistry registry = registry()) {
            assertThat(reconciler(registry).reconcile(written), is(Reconciler.Action.REVERSED));
        }

        assertThat(issuer.stats().reversals(), is(1L));
        assertThat(store.find(identity.decision().id()).orElseThrow().state(), is(AuthorizationState.REVERSED));
        assertThat(outcomes.ofResource(identity.decision().id()), is(empty()));
    }

    @Test
    void anExecutionWhoseDecisionLostTheRaceIsReversedByTheReconciler() throws Exception {
        // A frozen replica's execution and the retry that took over its key both decided; the first one recorded.
        assertThat(execution(1), instanceOf(Work.Decided.class));
        assertThat(execution(2), instanceOf(Work.Decided.class));
        assertThat("two approvals until the loser is reversed", issuer.stats().paymentsApprovedTwiceNet(), is(1L));
        UnknownOutcome loser = outcomes.ofResource(identity.decision().id()).getFirst();
        assertThat(loser.attemptId(), is(FreshAttempts.attemptId(identity.attemptId(), 2)));

        try (IdempotencyRegistry registry = registry()) {
            assertThat(reconciler(registry).reconcile(loser), is(Reconciler.Action.REVERSED));
        }

        assertThat(issuer.stats().paymentsApprovedTwiceNet(), is(0L));
        AuthorizationRecord stored = store.find(identity.decision().id()).orElseThrow();
        assertThat("the recorded attempt stands", stored.attemptId(),
                   is(FreshAttempts.attemptId(identity.attemptId(), 1)));
        assertThat(stored.status(), is("APPROVED"));
    }

    @Test
    void aRetryAfterAnExecutionWroteTheAuthorizationAndFrozeAnswersItAndReversesNothing() throws Exception {
        assertThat(execution(1), instanceOf(Work.Decided.class));
        // Frozen past its lease right after the write: its attempt record was never removed.
        outcomes.record(FreshAttempts.outcome(FreshAttempts.attemptId(identity.attemptId(), 1),
                Work.Attempt.of(lookupKey, identity), request, java.time.Instant.now(),
                java.time.Instant.now().plusSeconds(60)));

        Work.Outcome retry = execution(2);

        assertThat(retry, instanceOf(Work.Decided.class));
        assertThat(store.find(identity.decision().id()).orElseThrow().attemptId(),
                   is(FreshAttempts.attemptId(identity.attemptId(), 1)));
        assertThat("the written attempt is not reversed", issuer.stats().reversals(), is(0L));
        assertThat("nothing sent again", issuer.stats().requests(), is(1L));
        assertThat(outcomes.ofResource(identity.decision().id()), is(empty()));
    }

    @Test
    void onPostgresARetryReversesTheAttemptOfAKilledExecutionThenAuthorizesUnderItsOwn() throws Exception {
        PostgresServer.assumeInstalled();
        try (PostgresServer server = PostgresServer.start();
             Database database = Database.open(new DatabaseSettings(server.url(), Optional.of(PostgresServer.USER),
                     Optional.empty(), 4, Duration.ofSeconds(2), Duration.ofSeconds(1), Duration.ofSeconds(2),
                     Optional.empty()), Duration.ofDays(7), meters)) {
            ReconcilerRaceTest.awaitMigrated(database);
            outcomes = PostgresUnknownOutcomes.create(database);
            store = PostgresAuthorizationStore.create(database);
            work = new AuthorizeWork(bounded, store, Duration.ofDays(7), meters, outcomes, settings,
                                     Clock.systemUTC());
            killedAfterTheCall = true;
            try {
                execution(1);
            } catch (Killed e) {
                // The replica is gone; its attempt was recorded before the call.
            }
            killedAfterTheCall = false;

            assertThat(execution(2), instanceOf(Work.Decided.class));

            assertThat(store.find(identity.decision().id()).orElseThrow().attemptId(),
                       is(FreshAttempts.attemptId(identity.attemptId(), 2)));
            IssuerStats stats = issuer.stats();
            assertThat(stats.reversals(), is(1L));
            assertThat(stats.paymentsApprovedTwiceNet(), is(0L));
            assertThat(outcomes.ofResource(identity.decision().id()), is(empty()));
        }
    }

    /**
     * The production wiring of the postgres backend ({@code Backends}: the registry is
     * {@code PostgresIdempotencyStore.systemOfRecord}, whose recording writes the authorization row, and the resource
     * store is {@code PostgresAuthorizationStore.writtenWithDecisions}): the row must name the attempt the acquirer
     * approved, the execution's own ({@code att_} of the token), as captures and voids name it and the reconciler
     * compares it.
     */
    @Test
    void onThePostgresBackendTheAuthorizationNamesTheAttemptTheAcquirerApproved() throws Exception {
        PostgresServer.assumeInstalled();
        try (PostgresServer server = PostgresServer.start();
             Database database = Database.open(new DatabaseSettings(server.url(), Optional.of(PostgresServer.USER),
                     Optional.empty(), 4, Duration.ofSeconds(2), Duration.ofSeconds(1), Duration.ofSeconds(2),
                     Optional.empty()), Duration.ofDays(7), meters)) {
            ReconcilerRaceTest.awaitMigrated(database);
            outcomes = PostgresUnknownOutcomes.create(database);
            store = PostgresAuthorizationStore.writtenWithDecisions(database);
            work = new AuthorizeWork(bounded, store, Duration.ofDays(7), meters, outcomes, settings,
                                     Clock.systemUTC());
            try (IdempotencyRegistry registry = IdempotencyRegistry.create(
                    com.example.payments.database.PostgresIdempotencyStore.systemOfRecord(database, Duration.ofDays(7)),
                    Duration.ofSeconds(10), Duration.ofHours(1), Duration.ZERO, Quota.UNLIMITED, meters)) {
                var claim = (com.example.payments.idempotency.Claim.Acquired) registry.claim(lookupKey,
                                                                                              java.util.List.of(identity));
                Work.Outcome outcome = work.of(request).perform(Work.Attempt.of(lookupKey, identity, claim.token(),
                                                                                call -> true));
                assertThat(outcome, instanceOf(Work.Decided.class));
                Work.Decided decided = (Work.Decided) outcome;
                // As IdempotentOperation records it: under the attempt id that decided, then its hook.
                decided.whenRecorded().accept(registry.recordAndComplete(claim, decided.recordedAs(identity),
                        new com.example.payments.idempotency.Decision(identity.decision(), decided.body())));

                assertThat(issuer.stats().approved(), is(1L));
                assertThat("the stored attempt is the one sent to the acquirer",
                           store.find(identity.decision().id()).orElseThrow().attemptId(),
                           is(FreshAttempts.attemptId(identity.attemptId(), claim.token())));
                assertThat("the attempt's record goes once its own decision is stored",
                           outcomes.ofResource(identity.decision().id()), is(java.util.List.of()));
            }
        }
    }

    private Work.Outcome execution(long token) throws InterruptedException {
        return work.of(request).perform(Work.Attempt.of(lookupKey, identity, token, call -> true));
    }

    private IdempotencyRegistry registry() {
        return IdempotencyRegistry.create(InMemoryIdempotencyStore.create(100), Duration.ofSeconds(10),
                                          Duration.ofHours(1), Duration.ZERO, Quota.UNLIMITED, meters);
    }

    private Reconciler reconciler(IdempotencyRegistry registry) {
        return Reconciler.create(outcomes, registry, InMemoryKeyBindings.create(100), store, bounded, settings,
                                 Clock.systemUTC(), 10, meters);
    }

    private static Authorizer.Decision decision(SimulatedIssuer.Decided decided) {
        return decided.decision().approved() ? Authorizer.Decision.approve(decided.decidedAt())
                : Authorizer.Decision.decline(decided.decision().declineCode(), decided.decidedAt());
    }
}
