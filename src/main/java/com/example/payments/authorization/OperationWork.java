package com.example.payments.authorization;

import java.lang.System.Logger.Level;
import java.time.Clock;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

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
 * The work of a capture or a void once its key is claimed, one {@link Lifecycle} transition: reserve in the resource
 * store (one conditional write), call the acquirer with the operation's own attempt id, settle. A decline returns the
 * reservation and is answered 201 with {@code status: DECLINED}; an unknown outcome (502, 504) keeps the reservation
 * and releases the key, so the retry finds the pending operation and sends the same attempt id again. A refusal of
 * the lifecycle (409, 422) or an authorization that is not there (404) reserves nothing and releases the key.
 * Counts {@code captures_total{status}} and {@code voids_total{status}} once per recorded decision.
 */
final class OperationWork {

    // One line per refused request (a full or unreachable store): rate-limited in log4j2.xml.
    private static final System.Logger REFUSALS = System.getLogger(OperationWork.class.getName() + ".refusals");

    private final BoundedAuthorizer authorizer;
    private final AuthorizationStore store;
    private final int maxCaptures;
    private final Clock clock;
    private final MeterRegistry meters;
    private final Map<String, Counter> counters = new ConcurrentHashMap<>();

    OperationWork(BoundedAuthorizer authorizer, AuthorizationStore store, int maxCaptures, Clock clock,
                  MeterRegistry meters) {
        this.authorizer = authorizer;
        this.store = store;
        this.maxCaptures = maxCaptures;
        this.clock = clock;
        this.meters = meters;
        for (String kind : List.of("captures", "voids")) {
            for (String status : List.of("succeeded", "declined")) {
                counter(kind, status);
            }
        }
    }

    /**
     * The work of one capture.
     *
     * @param authorization the parent, as read before the claim (its attempt id is what the acquirer knows)
     * @param amount        the amount to capture
     * @return the work
     */
    Work capture(AuthorizationRecord authorization, Amount amount) {
        return attempt -> run(attempt, OperationRecord.CAPTURE, authorization, amount);
    }

    /**
     * The work of one void of the whole remainder.
     *
     * @param authorization the parent
     * @return the work
     */
    Work voidRemainder(AuthorizationRecord authorization) {
        return attempt -> run(attempt, OperationRecord.VOID, authorization,
                              new Amount(0, authorization.amount().currency()));
    }

    private Work.Outcome run(Work.Attempt attempt, String kind, AuthorizationRecord authorization, Amount amount)
            throws InterruptedException {
        Instant now = clock.instant().truncatedTo(ChronoUnit.MILLIS);
        OperationRecord pending = new OperationRecord(attempt.resourceId(), kind, authorization.id(),
                attempt.attemptId(), authorization.merchantId(), amount, "PENDING", null, now);
        AuthorizationStore.Reservation reservation;
        try {
            reservation = store.reserve(authorization.id(), pending, maxCaptures, now);
        } catch (IdempotencyStore.UnavailableException e) {
            return unavailable(e);
        } catch (StoreFullException e) {
            REFUSALS.log(Level.WARNING, "Operation refused: {0}", e.getMessage());
            return new Work.Undecided(Problem.of("store-full", "Temporarily unavailable", 503, "The service holds as "
                    + "many resources as it may. Retry later with the same Idempotency-Key."), ReleaseReason.ERROR, 5);
        }
        return switch (reservation) {
        case AuthorizationStore.NotFound notFound -> new Work.Undecided(Problem.of("not-found", "Not found", 404,
                "No authorization with this id."), ReleaseReason.REFUSED);
        case AuthorizationStore.Refused refused -> new Work.Undecided(problem(refused.refusal()),
                                                                      ReleaseReason.REFUSED);
        case AuthorizationStore.Existing existing -> existing.operation().pending()
                ? call(existing.operation(), authorization) : decided(existing.operation());
        case AuthorizationStore.Reserved reserved -> call(reserved.operation(), authorization);
        };
    }

    private Work.Outcome call(OperationRecord operation, AuthorizationRecord authorization)
            throws InterruptedException {
        AcquirerOperation call = new AcquirerOperation(operation.attemptId(), authorization.attemptId(),
                                                       operation.amount().value(), operation.amount().currency());
        BoundedAuthorizer.Outcome outcome = operation.kind().equals(OperationRecord.CAPTURE)
                ? authorizer.capture(call) : authorizer.voidRemainder(call);
        return switch (outcome) {
        case BoundedAuthorizer.Decided decided -> {
            try {
                yield decided(store.settle(operation, decided.decision().approved(), decided.decision().declineCode(),
                                           clock.instant().truncatedTo(ChronoUnit.MILLIS)));
            } catch (IdempotencyStore.UnavailableException e) {
                yield unavailable(e);
            }
        }
        case BoundedAuthorizer.Failed failed -> new Work.Undecided(Problem.of("issuer-unavailable",
                "Issuer unavailable", 502, "The acquirer could not be reached; the outcome is unknown and the amount "
                + "stays reserved. Retry with the same Idempotency-Key."), ReleaseReason.ISSUER_UNAVAILABLE);
        case BoundedAuthorizer.TimedOut timedOut -> new Work.Undecided(Problem.of("issuer-timeout",
                "Issuer timeout", 504, "The acquirer did not answer in time; the outcome is unknown and the amount "
                + "stays reserved. Retry with the same Idempotency-Key."), ReleaseReason.ISSUER_TIMEOUT);
        };
    }

    private Work.Outcome decided(OperationRecord operation) {
        String kind = operation.kind().equals(OperationRecord.CAPTURE) ? "captures" : "voids";
        return new Work.Decided(Json.bytes(operation.body()),
                                () -> counter(kind, operation.status().toLowerCase(Locale.ROOT)).increment());
    }

    private static Work.Outcome unavailable(IdempotencyStore.UnavailableException e) {
        REFUSALS.log(Level.WARNING, "Resource store unavailable for a capture or void: {0}", e.getMessage());
        return new Work.Undecided(Problem.of("store-unavailable", "Temporarily unavailable", 503, "The store cannot "
                + "be reached. Retry shortly with the same Idempotency-Key."), ReleaseReason.ERROR, 1);
    }

    private static Problem problem(Lifecycle.Refused refused) {
        Problem problem = Problem.of(refused.type(), refused.status() == 409 ? "Not capturable"
                : "Capture not allowed", refused.status(), refused.detail());
        return refused.pointer() == null ? problem
                : problem.withErrors(List.of(Problem.FieldError.body(refused.pointer(), refused.detail())));
    }

    private Counter counter(String kind, String status) {
        return counters.computeIfAbsent(kind + " " + status, k -> meters.getOrCreate(
                Counter.builder(kind).tags(List.of(Tag.create("status", status)))
                        .description("Recorded " + kind + " by status")));
    }
}
