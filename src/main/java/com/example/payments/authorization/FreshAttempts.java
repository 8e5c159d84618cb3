package com.example.payments.authorization;

import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

import com.example.payments.http.Problem;
import com.example.payments.idempotency.IdempotencyRegistry.ReleaseReason;
import com.example.payments.idempotency.Work;

import io.helidon.metrics.api.Counter;
import io.helidon.metrics.api.MeterRegistry;
import io.helidon.metrics.api.Tag;

/**
 * Attempts of an authorization for an acquirer that does not deduplicate attempt ids
 * ({@code authorizer.acquirer-deduplicates: false}): such an acquirer approves an attempt id sent twice twice, so no
 * attempt id is ever sent twice, and no attempt is left unknown behind a new one.
 * <ul>
 *     <li><b>One attempt id per execution</b>: {@code att_} + 32 hex characters derived from the request's attempt id
 *     and the fencing token of the claim it runs under; the token grows per key, so a retry, a second replica after
 *     a lost lease and a frozen replica that wakes up each send their own.</li>
 *     <li><b>Write-ahead</b>: the attempt is recorded in {@link UnknownOutcomes} before its call, with a deadline
 *     {@code authorizer.timeout} + {@code authorizer.unknown-outcome.reverse-after} away, and removed once its
 *     decision is recorded. A replica killed or frozen mid-call leaves it there: the {@link Reconciler} reverses it
 *     at its deadline, or a retry finds it first.</li>
 *     <li><b>Earlier attempts first</b>: before it sends its own, an execution resolves every recorded attempt of its
 *     authorization. When the authorization is written already (its execution lost the lease after writing it), it
 *     is answered and nothing is sent or reversed. Otherwise one whose decision this replica kept ({@link LateDecisions}) is recorded instead of calling the
 *     issuer; every other one is reversed (confirmed by the acquirer; a reversal that comes before its call leaves a
 *     tombstone there, so the late call is declined) and its record removed, counted in
 *     {@code unknown_outcomes_total{resolution="superseded"}}. A reversal not confirmed answers 503
 *     {@code reversal-pending} with {@code Retry-After: 1} and authorizes nothing.</li>
 * </ul>
 * Costs per authorization: one read, one write and one delete of {@code unknown_outcomes}, and one read of the
 * resource store after the recording (which attempt's authorization it holds).
 */
final class FreshAttempts {

    private static final System.Logger LOGGER = System.getLogger(FreshAttempts.class.getName());

    /** What an execution does once the earlier attempts are resolved. */
    sealed interface Prepared {
    }

    /**
     * Call the issuer with this attempt id: it is recorded.
     *
     * @param attemptId the execution's own attempt id
     */
    record Send(String attemptId) implements Prepared {
    }

    /**
     * Record an earlier attempt's decision, kept by this replica, without calling the issuer.
     *
     * @param attemptId the earlier attempt's id
     * @param decision  its decision
     */
    record Late(String attemptId, Authorizer.Decision decision) implements Prepared {
    }

    /**
     * The authorization is written already (an execution that lost its lease after writing it): answer it, send
     * nothing, reverse nothing.
     *
     * @param authorization what the resource store holds
     */
    record Recorded(AuthorizationRecord authorization) implements Prepared {
    }

    /**
     * Nothing may be sent: answer this, the key released.
     *
     * @param answer the answer
     */
    record Refused(Work.Undecided answer) implements Prepared {
    }

    private final BoundedAuthorizer authorizer;
    private final UnknownOutcomes outcomes;
    private final AuthorizationStore store;
    private final Reversals reversals;
    private final Duration timeout;
    private final Duration reverseAfter;
    private final Clock clock;
    private final Counter superseded;

    FreshAttempts(BoundedAuthorizer authorizer, UnknownOutcomes outcomes, AuthorizationStore store, Duration timeout,
                  Duration reverseAfter, Clock clock, MeterRegistry meters) {
        this.authorizer = authorizer;
        this.outcomes = outcomes;
        this.store = store;
        this.reversals = new Reversals(authorizer, meters);
        this.timeout = timeout;
        this.reverseAfter = reverseAfter;
        this.clock = clock;
        this.superseded = meters.getOrCreate(Counter.builder("unknown_outcomes")
                .tags(List.of(Tag.create("resolution", "superseded")))
                .description("Unknown outcomes of authorizations resolved, by how: a client's retry, or a reversal"));
    }

    /**
     * The attempt id of one execution.
     *
     * @param attemptId the request's attempt id
     * @param token     the fencing token of the execution's claim
     * @return {@code att_} + 32 hex characters, the same for the same token
     */
    static String attemptId(String attemptId, long token) {
        return "att_" + UUID.nameUUIDFromBytes((attemptId + ":" + token).getBytes(StandardCharsets.UTF_8))
                .toString().replace("-", "");
    }

    /**
     * Resolves the earlier attempts of the request, then records this execution's attempt before its call.
     *
     * @param attempt the execution
     * @param request the request
     * @return what to do
     * @throws InterruptedException when the request is cut off during a reversal
     * @throws com.example.payments.idempotency.IdempotencyStore.UnavailableException when the records cannot be read
     *                                                                                or written: nothing was sent
     */
    Prepared prepare(Work.Attempt attempt, AuthorizationRequest request) throws InterruptedException {
        List<UnknownOutcome> attempts = outcomes.ofResource(attempt.resourceId());
        if (!attempts.isEmpty()) {
            // An execution that wrote the authorization and then lost its lease left its attempt recorded: that
            // attempt is the authorization, never reversed; the others are the reconciler's.
            Optional<AuthorizationRecord> written = store.find(attempt.resourceId());
            if (written.isPresent()) {
                return new Recorded(written.get());
            }
        }
        Late late = null;
        for (UnknownOutcome earlier : attempts) {
            Optional<Authorizer.Decision> kept = late == null ? authorizer.takeLate(earlier.attemptId())
                    : Optional.empty();
            if (kept.isPresent()) {
                late = new Late(earlier.attemptId(), kept.get());
                continue;
            }
            Optional<Instant> reversed = reversals.send(earlier, () -> attempt.leaseCovers(timeout));
            reversals.forget(earlier.attemptId());
            if (reversed.isEmpty()) {
                if (late != null) {
                    authorizer.keep(late.attemptId(), late.decision());
                }
                return new Refused(new Work.Undecided(Problem.of("reversal-pending", "Temporarily unavailable", 503,
                        "An earlier attempt of this request is being reversed at the issuer; nothing was authorized. "
                        + "Retry shortly with the same Idempotency-Key."), ReleaseReason.ISSUER_UNAVAILABLE, 1));
            }
            if (outcomes.remove(earlier.attemptId())) {
                superseded.increment();
            }
            LOGGER.log(Level.INFO, "Attempt {0} of authorization {1} reversed before another attempt is sent",
                       earlier.attemptId(), attempt.resourceId());
        }
        if (late != null) {
            return late;
        }
        if (!attempt.leaseCovers(timeout)) {
            return new Refused(new Work.Undecided(leaseLost(), ReleaseReason.LEASE_LOST, 1));
        }
        String id = attemptId(attempt.attemptId(), attempt.token());
        Instant now = clock.instant().truncatedTo(ChronoUnit.MILLIS);
        outcomes.record(outcome(id, attempt, request, now, now.plus(timeout).plus(reverseAfter)));
        return new Send(id);
    }

    /**
     * After the decision of an attempt was written to the resource store: its record is removed when the stored
     * authorization is this attempt's; otherwise another execution's decision was stored first, and the record stays
     * for the reconciler, which reverses the attempt.
     *
     * @param attemptId the attempt whose decision was written
     * @param stored    what the resource store holds
     */
    void decided(String attemptId, AuthorizationRecord stored) {
        if (!stored.attemptId().equals(attemptId)) {
            LOGGER.log(Level.WARNING, "Authorization {0} holds attempt {1}; attempt {2} is left to the reconciler",
                       stored.id(), stored.attemptId(), attemptId);
            return;
        }
        try {
            outcomes.remove(attemptId);
        } catch (RuntimeException e) {
            // The reconciler finds the decision recorded under this attempt id and drops the record.
            LOGGER.log(Level.WARNING, "Record of attempt {0} not removed: {1}", attemptId, String.valueOf(e));
        }
    }

    /**
     * After the recording of an attempt's decision ({@link Work.Decided#whenRecorded()}): reads the authorization the
     * resource store holds now (with the postgres backend the recording is what writes it, so only this read tells
     * which attempt's decision is stored) and goes on as {@link #decided}. A store that cannot be read leaves the
     * record to the reconciler. Costs one read of the resource store.
     *
     * @param attemptId  the attempt whose decision was recorded
     * @param resourceId the authorization's id
     */
    void recorded(String attemptId, String resourceId) {
        Optional<AuthorizationRecord> stored;
        try {
            stored = store.find(resourceId);
        } catch (RuntimeException e) {
            LOGGER.log(Level.WARNING, "Authorization {0} not read after its recording; attempt {1} is left to the "
                                      + "reconciler: {2}", resourceId, attemptId, String.valueOf(e));
            return;
        }
        if (stored.isEmpty()) {
            LOGGER.log(Level.WARNING, "Authorization {0} not found after its recording; attempt {1} is left to the "
                                      + "reconciler", resourceId, attemptId);
            return;
        }
        decided(attemptId, stored.get());
    }

    /**
     * The answer when the lease no longer covers the call or the recording.
     *
     * @return 503 {@code lease-lost}
     */
    static Problem leaseLost() {
        return Problem.of("lease-lost", "Idempotency lease lost", 503, "This instance lost its hold on the "
                + "Idempotency-Key while it processed the request. Retry with the same Idempotency-Key.");
    }

    static UnknownOutcome outcome(String attemptId, Work.Attempt attempt, AuthorizationRequest request, Instant now,
                                  Instant reverseAt) {
        return new UnknownOutcome(attemptId, attempt.lookupKey(), request.merchantId(),
                attempt.identity().fingerprint(), attempt.resourceId(), request.reference(), request.amount(),
                new Authorization.CardSummary(request.card().brand(), request.card().last4()), now, reverseAt);
    }
}
