package com.example.payments.idempotency;

import java.util.List;

import com.example.payments.http.Problem;

/**
 * The RFC 9457 problems of the idempotent-operation flow, with the {@code Retry-After} each one is sent with.
 */
final class IdempotencyProblems {

    private IdempotencyProblems() {
    }

    static Problem invalidKey(int headers, String route) {
        String detail = switch (headers) {
        case 0 -> "Idempotency-Key header is required for " + route + ".";
        case 1 -> "Idempotency-Key must be exactly one key of 1 to 255 printable ASCII characters, as a "
                   + "quoted string or a bare token (no list, no parameters).";
        default -> "Send exactly one Idempotency-Key header.";
        };
        return Problem.of("invalid-idempotency-key", "Invalid Idempotency-Key", 400, detail)
                .withErrors(List.of(Problem.FieldError.header(IdempotencyKey.HEADER, detail)));
    }

    static Problem inProgress() {
        return Problem.of("request-in-progress", "Request in progress", 409,
                          "A request with this Idempotency-Key is still being processed; retry after it completes.");
    }

    static Problem reused() {
        return Problem.of("idempotency-key-reused", "Idempotency-Key reused", 422,
                          "This Idempotency-Key was already used with a different request body.");
    }

    static Problem full() {
        return Problem.of("idempotency-capacity", "Idempotency registry full", 503,
                          "This instance holds its maximum number of idempotency keys; retry shortly.");
    }

    // The in-memory resource store's bound (authorization.in-memory.max-resources), which its key bindings share;
    // the registry's own bound is idempotency-capacity.
    static Problem storeFull() {
        return Problem.of("store-full", "Temporarily unavailable", 503, "The service holds as many resources as it "
                          + "may. Retry later with the same Idempotency-Key.");
    }

    /**
     * {@code Retry-After} of a merchant at its records quota, in seconds: its records free up only as they expire, so
     * a retry within seconds would be refused again.
     */
    static final int RECORDS_RETRY_AFTER_SECONDS = 60;

    static Problem overQuota(Quota.Limit limit) {
        return Problem.of("merchant-quota-exceeded", "Merchant quota exceeded", 429, switch (limit) {
        case IN_FLIGHT -> "This merchant has its maximum number of requests in progress; retry when one of them "
                          + "completed.";
        case RECORDS -> "This merchant holds its maximum number of idempotency records; older ones free up as "
                        + "they expire. Retry later, or ask for a higher quota.";
        });
    }

    static Problem storeUnavailable() {
        return Problem.of("store-unavailable", "Temporarily unavailable", 503,
                          "The idempotency store could not record this request; nothing was done. Retry shortly.");
    }

    static Problem draining() {
        return Problem.of("draining", "Shutting down", 503,
                          "This instance is shutting down and could not finish the request before its drain deadline; "
                          + "nothing was done. Retry with the same Idempotency-Key.");
    }

    static Problem leaseLost() {
        return Problem.of("lease-lost", "Idempotency lease lost", 503,
                          "This instance lost its hold on the Idempotency-Key before it could process the request; "
                          + "nothing was done. Retry with the same Idempotency-Key.");
    }

    static Problem outcomeUnknown() {
        return Problem.of("outcome-unknown", "Outcome unknown", 504,
                          "The request was cut off before its outcome was recorded; it may have been processed. Retry "
                          + "with the same Idempotency-Key: the retry answers the recorded outcome, or processes the "
                          + "request once.");
    }
}
