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
 * nothing was recorded, and the retry sends the same attempt id, which the issuer deduplicates.
 */
final class AuthorizeWork {

    private static final System.Logger LOGGER = System.getLogger(AuthorizeWork.class.getName());

    private final BoundedAuthorizer authorizer;
    private final AuthorizationStore store;
    private final Duration validity;
    private final Counter approved;
    private final Counter declined;

    AuthorizeWork(BoundedAuthorizer authorizer, AuthorizationStore store, Duration validity, MeterRegistry meters) {
        this.authorizer = authorizer;
        this.store = store;
        this.validity = validity;
        this.approved = counter(meters, "APPROVED");
        this.declined = counter(meters, "DECLINED");
    }

    /**
     * The work for one validated request.
     *
     * @param request the request
     * @return work that calls the authorizer
     */
    Work of(AuthorizationRequest request) {
        return attempt -> switch (authorizer.authorize(new AuthorizationAttempt(attempt.attemptId(), request))) {
            case BoundedAuthorizer.Decided decided -> decided(attempt, request, decided.decision());
            case BoundedAuthorizer.Failed failed -> new Work.Undecided(Problem.of(
                    "issuer-unavailable", "Issuer unavailable", 502, "The card issuer could not be reached; the "
                    + "outcome is unknown. Retry with the same Idempotency-Key."), ReleaseReason.ISSUER_UNAVAILABLE);
            case BoundedAuthorizer.TimedOut timedOut -> new Work.Undecided(Problem.of(
                    "issuer-timeout", "Issuer timeout", 504, "The card issuer did not answer in time; the outcome is "
                    + "unknown. Retry with the same Idempotency-Key."), ReleaseReason.ISSUER_TIMEOUT);
        };
    }

    private Work.Outcome decided(Work.Attempt attempt, AuthorizationRequest request, Authorizer.Decision decision) {
        AuthorizationRecord stored;
        try {
            stored = store.create(AuthorizationRecord.created(attempt.resourceId(), attempt.attemptId(), request,
                                                              decision, validity));
        } catch (StoreFullException e) {
            LOGGER.log(Level.WARNING, "Authorization refused: {0}", e.getMessage());
            return new Work.Undecided(Problem.of("store-full", "Temporarily unavailable", 503, "The service holds as "
                    + "many authorizations as it may. Retry later with the same Idempotency-Key."),
                    ReleaseReason.ERROR, 5);
        } catch (IdempotencyStore.UnavailableException e) {
            LOGGER.log(Level.WARNING, "Resource store unavailable, the authorization is not recorded: {0}",
                       e.getMessage());
            return new Work.Undecided(Problem.of("store-unavailable", "Temporarily unavailable", 503, "The store "
                    + "cannot be reached. Retry shortly with the same Idempotency-Key."), ReleaseReason.ERROR, 1);
        }
        Authorization created = stored.createdView();
        return new Work.Decided(Json.bytes(created), () -> count(created));
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
