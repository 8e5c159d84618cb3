package com.example.payments.authorization;

import java.time.Clock;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Locale;

import com.example.payments.http.Json;
import com.example.payments.http.Problem;
import com.example.payments.idempotency.IdempotencyRegistry.ReleaseReason;
import com.example.payments.idempotency.Work;

import io.helidon.metrics.api.Counter;
import io.helidon.metrics.api.MeterRegistry;
import io.helidon.metrics.api.Tag;

/**
 * The work of {@code POST /v1/authorizations} once its key is claimed: one bounded authorizer call with the attempt
 * id, and the {@link Authorization} it decided (approved or declined), whose id is the attempt's resource id.
 * Counts {@code authorizations_total{status}} once per recorded decision, however many executions converge on it.
 */
final class AuthorizeWork {

    private final BoundedAuthorizer authorizer;
    private final Clock clock;
    private final Counter approved;
    private final Counter declined;

    AuthorizeWork(BoundedAuthorizer authorizer, Clock clock, MeterRegistry meters) {
        this.authorizer = authorizer;
        this.clock = clock;
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

    private Work.Outcome decided(Work.Attempt attempt, AuthorizationRequest request,
                                                Authorizer.Decision decision) {
        Card card = request.card();
        Authorization authorization = new Authorization(attempt.resourceId(),
                decision.approved() ? "APPROVED" : "DECLINED", decision.declineCode(), request.merchantId(),
                request.reference(), request.amount(), new Authorization.CardSummary(card.brand(), card.last4()),
                Instant.now(clock).truncatedTo(ChronoUnit.MILLIS).toString());
        return new Work.Decided(Json.bytes(authorization), () -> count(authorization));
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
