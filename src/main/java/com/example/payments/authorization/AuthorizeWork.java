package com.example.payments.authorization;

import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.List;
import java.util.Locale;

import com.example.payments.http.Json;
import com.example.payments.http.Problem;
import com.example.payments.idempotency.IdempotencyRegistry.ReleaseReason;
import com.example.payments.idempotency.IdempotencyStore;
import com.example.payments.idempotency.StoreFullException;
import com.example.payments.idempotency.Work;

import io.helidon.metrics.api.Counter;
import io.helidon.metrics.api.MeterRegistry;
import io.helidon.metrics.api.Tag;

/**
 * The work of {@code POST /v1/authorizations} once its key is claimed: one bounded authorizer call with the attempt
 * id, then the {@link AuthorizationRecord} it decided (approved or declined) written to the resource store, insert-if-
 * absent, before the idempotency registry records the decision. Its id is the attempt's resource id and its
 * {@code createdAt} the issuer's time of the decision: nothing in it depends on which execution built it. Counts
 * {@code authorizations_total{status}} once per recorded decision, however many executions converge on it.
 *
 * <p>A resource store that is full or cannot be reached answers 503 with {@code Retry-After} and releases the key:
 * nothing was recorded; the decision is kept in this process ({@link LateDecisions}), so a retry here records it
 * without asking the issuer again, and a retry elsewhere sends the same attempt id, which the issuer deduplicates.
 *
 * <p>An outcome the issuer may have decided without this service learning it (the authorizer timed out, failed after
 * the call may have left, or the drain interrupted it) is recorded in {@link UnknownOutcomes} before the key is
 * released, with a deadline {@code authorizer.unknown-outcome.reverse-after} away: the {@link Reconciler} reverses it
 * then unless a retry resolved it. Counts {@code unknown_outcomes_recorded_total}. A record that cannot be written
 * is logged: the outcome then waits for the client's retry alone, as before.
 *
 * <p>With {@code authorizer.acquirer-deduplicates: false}, each execution sends an attempt id of its own, recorded
 * before its call, after the earlier attempts of the request are resolved ({@link FreshAttempts}); the decision is
 * written only while the claim's lease still covers the recording (else 503 {@code lease-lost}, the attempt left to
 * the reconciler or the next retry), and it and its authorization carry the attempt id the issuer decided on
 * ({@link Work.Decided#attemptId()}), which captures and voids send.
 */
final class AuthorizeWork {

    private static final System.Logger LOGGER = System.getLogger(AuthorizeWork.class.getName());
    // One line per refused request (a full or unreachable store): rate-limited in log4j2.xml, unlike LOGGER's.
    private static final System.Logger REFUSALS = System.getLogger(AuthorizeWork.class.getName() + ".refusals");

    private final BoundedAuthorizer authorizer;
    private final AuthorizationStore store;
    private final Duration validity;
    private final Counter approved;
    private final Counter declined;
    private final UnknownOutcomes outcomes;
    private final Duration reverseAfter;
    private final java.time.Clock clock;
    private final Counter recorded;
    private final FreshAttempts fresh;

    AuthorizeWork(BoundedAuthorizer authorizer, AuthorizationStore store, Duration validity, MeterRegistry meters,
                  UnknownOutcomes outcomes, AuthorizerSettings settings, java.time.Clock clock) {
        this.authorizer = authorizer;
        this.store = store;
        this.validity = validity;
        this.approved = counter(meters, "APPROVED");
        this.declined = counter(meters, "DECLINED");
        this.outcomes = outcomes;
        this.reverseAfter = settings.reverseAfter();
        this.clock = clock;
        this.fresh = settings.acquirerDeduplicates() ? null : new FreshAttempts(authorizer, outcomes, store,
                settings.timeout(), settings.reverseAfter(), clock, meters);
        this.recorded = meters.getOrCreate(Counter.builder("unknown_outcomes_recorded")
                .description("Authorizations whose outcome at the issuer became unknown (timeout, failure after "
                             + "the call may have left, drain cut-off), recorded for the reconciler"));
    }

    /**
     * The work for one validated request.
     *
     * @param request the request
     * @return work that calls the authorizer
     */
    Work of(AuthorizationRequest request) {
        return attempt -> fresh == null ? perform(attempt, request) : performFresh(attempt, request);
    }

    private Work.Outcome performFresh(Work.Attempt attempt, AuthorizationRequest request)
            throws InterruptedException {
        FreshAttempts.Prepared prepared;
        try {
            prepared = fresh.prepare(attempt, request);
        } catch (IdempotencyStore.UnavailableException | StoreFullException e) {
            LOGGER.log(Level.WARNING, "Attempts of authorization {0} not readable or not recorded, nothing sent: {1}",
                       attempt.resourceId(), String.valueOf(e));
            return new Work.Undecided(Problem.of("store-unavailable", "Temporarily unavailable", 503, "The store "
                    + "cannot be reached. Retry shortly with the same Idempotency-Key."), ReleaseReason.ERROR, 1);
        }
        return switch (prepared) {
        case FreshAttempts.Refused refused -> refused.answer();
        case FreshAttempts.Recorded recorded -> {
            AuthorizationRecord written = recorded.authorization();
            fresh.decided(written.attemptId(), written);
            Authorization created = written.createdView();
            yield new Work.Decided(Json.bytes(created), () -> count(created), written.attemptId(), r -> { });
        }
        case FreshAttempts.Late late -> decided(as(attempt, late.attemptId()), request, late.decision());
        case FreshAttempts.Send send -> perform(as(attempt, send.attemptId()), request);
        };
    }

    private static Work.Attempt as(Work.Attempt attempt, String attemptId) {
        return new Work.Attempt(attemptId, attempt.resourceId(), attempt.lookupKey(), attempt.identity(),
                                attempt.token(), attempt.lease());
    }

    private Work.Outcome perform(Work.Attempt attempt, AuthorizationRequest request) throws InterruptedException {
        return switch (call(attempt, request)) {
            case BoundedAuthorizer.Decided decided -> decided(attempt, request, decided.decision());
            case BoundedAuthorizer.Failed failed -> {
                unknown(attempt, request);
                yield new Work.Undecided(Problem.of("issuer-unavailable", "Issuer unavailable", 502, "The card "
                        + "issuer could not be reached; the outcome is unknown. Retry with the same Idempotency-Key "
                        + "within " + reverseAfter.toSeconds() + " s; after that the authorization is reversed."),
                        ReleaseReason.ISSUER_UNAVAILABLE);
            }
            case BoundedAuthorizer.TimedOut timedOut -> {
                unknown(attempt, request);
                yield new Work.Undecided(Problem.of("issuer-timeout", "Issuer timeout", 504, "The card issuer did "
                        + "not answer in time; the outcome is unknown. Retry with the same Idempotency-Key within "
                        + reverseAfter.toSeconds() + " s; after that the authorization is reversed."),
                        ReleaseReason.ISSUER_TIMEOUT);
            }
        };
    }

    private BoundedAuthorizer.Outcome call(Work.Attempt attempt, AuthorizationRequest request)
            throws InterruptedException {
        try {
            return authorizer.authorize(new AuthorizationAttempt(attempt.attemptId(), request));
        } catch (InterruptedException e) {
            // The drain cut the call off: the issuer may have decided. The catch cleared the interrupt, so the record
            // is written; the request then ends as the flow ends a cut-off request.
            unknown(attempt, request);
            throw e;
        }
    }

    // Written before the key is released: a retry that comes at once finds the record, and the reconciler's claim
    // decides between them.
    private void unknown(Work.Attempt attempt, AuthorizationRequest request) {
        java.time.Instant now = clock.instant().truncatedTo(java.time.temporal.ChronoUnit.MILLIS);
        try {
            outcomes.record(FreshAttempts.outcome(attempt.attemptId(), attempt, request, now, now.plus(reverseAfter)));
            recorded.increment();
        } catch (RuntimeException e) {
            LOGGER.log(Level.ERROR, "Unknown outcome of attempt {0} not recorded, nothing reverses it unless the "
                                    + "client retries: {1}", attempt.attemptId(), String.valueOf(e));
        }
    }

    private Work.Outcome decided(Work.Attempt attempt, AuthorizationRequest request, Authorizer.Decision decision) {
        AuthorizationRecord stored;
        if (fresh != null && !attempt.leaseCovers(Duration.ZERO)) {
            // Another execution may hold the key and have reversed this attempt: its decision is not written. The
            // attempt stays recorded; the reconciler, or the next retry, reverses it.
            authorizer.keep(attempt.attemptId(), decision);
            LOGGER.log(Level.WARNING, "Lease lost before attempt {0} was recorded; left to the reconciler",
                       attempt.attemptId());
            return new Work.Undecided(FreshAttempts.leaseLost(), ReleaseReason.LEASE_LOST, 1);
        }
        try {
            stored = store.create(AuthorizationRecord.created(attempt.resourceId(), attempt.attemptId(), request,
                                                              decision, validity));
        } catch (StoreFullException e) {
            // The issuer decided: a retry here answers from the kept decision rather than sending the attempt again.
            authorizer.keep(attempt.attemptId(), decision);
            REFUSALS.log(Level.WARNING, "Authorization refused: {0}", e.getMessage());
            return new Work.Undecided(Problem.of("store-full", "Temporarily unavailable", 503, "The service holds as "
                    + "many authorizations as it may. Retry later with the same Idempotency-Key."),
                    ReleaseReason.ERROR, 5);
        } catch (IdempotencyStore.UnavailableException e) {
            authorizer.keep(attempt.attemptId(), decision);
            REFUSALS.log(Level.WARNING, "Resource store unavailable, the authorization is not recorded: {0}",
                       e.getMessage());
            return new Work.Undecided(Problem.of("store-unavailable", "Temporarily unavailable", 503, "The store "
                    + "cannot be reached. Retry shortly with the same Idempotency-Key."), ReleaseReason.ERROR, 1);
        }
        Authorization created = stored.createdView();
        if (fresh == null) {
            return new Work.Decided(Json.bytes(created), () -> count(created));
        }
        if (!store.writtenByRecordings()) {
            fresh.decided(attempt.attemptId(), stored);
            return new Work.Decided(Json.bytes(created), () -> count(created), stored.attemptId(), recorded -> { });
        }
        // The recording writes the authorization: the attempt's record goes once it did, if it stored this attempt's.
        return new Work.Decided(Json.bytes(created), () -> count(created), stored.attemptId(),
                                recorded -> fresh.recorded(attempt.attemptId(), stored.id()));
    }

    private void count(Authorization authorization) {
        ("APPROVED".equals(authorization.status()) ? approved : declined).increment();
    }

    private static Counter counter(MeterRegistry meters, String status) {
        return meters.getOrCreate(Counter.builder("authorizations")
                                          .tags(List.of(Tag.create("status", status.toLowerCase(Locale.ROOT))))
                                          .description("Recorded authorization decisions by status"));
    }
}
