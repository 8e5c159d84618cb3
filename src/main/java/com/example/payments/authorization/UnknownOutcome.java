package com.example.payments.authorization;

import java.time.Instant;
import java.util.Objects;

import com.example.payments.idempotency.DecisionKey;
import com.example.payments.idempotency.Identity;

/**
 * An authorization whose outcome at the issuer is unknown (the authorizer timed out, failed after the call may have
 * been sent, or the drain cut the request off), kept durably until a client retry or the {@link Reconciler} resolves
 * it. Holds what the reconciler needs to claim the key as the request would (lookup key, fingerprint, attempt id), to
 * reverse the attempt, and to record the reversed authorization (merchant, reference, amount, card brand and last four
 * digits). No PAN, no CVC.
 *
 * @param attemptId  the attempt id sent to the issuer; one record per attempt id
 * @param lookupKey  the idempotency key's lookup key (operation, merchant, key; length-prefixed)
 * @param merchantId the merchant the request acted for
 * @param fingerprint the request's fingerprint (HMAC of its canonical form)
 * @param resourceId  the id the authorization has or will have
 * @param reference   the merchant reference, or {@code null}
 * @param amount      the amount asked for
 * @param card        brand and last four digits
 * @param recordedAt  when the outcome became unknown (the latest time, when a retry's outcome was unknown again)
 * @param reverseAt   {@code recordedAt} + {@code authorizer.unknown-outcome.reverse-after}: from then on the
 *                    reconciler claims the key and reverses the attempt
 */
public record UnknownOutcome(String attemptId, String lookupKey, String merchantId, String fingerprint,
                             String resourceId, String reference, Amount amount, Authorization.CardSummary card,
                             Instant recordedAt, Instant reverseAt) {

    /** The kind under which an authorization's decision is recorded. */
    static final String KIND = "authorization";

    /**
     * Checks the required parts.
     *
     * @throws NullPointerException when one is null
     */
    public UnknownOutcome {
        Objects.requireNonNull(attemptId, "attemptId");
        Objects.requireNonNull(lookupKey, "lookupKey");
        Objects.requireNonNull(merchantId, "merchantId");
        Objects.requireNonNull(fingerprint, "fingerprint");
        Objects.requireNonNull(resourceId, "resourceId");
        Objects.requireNonNull(amount, "amount");
        Objects.requireNonNull(card, "card");
        Objects.requireNonNull(recordedAt, "recordedAt");
        Objects.requireNonNull(reverseAt, "reverseAt");
    }

    /**
     * The request's identity, as a claim of its key needs it.
     *
     * @return fingerprint, attempt id and the key of its decision
     */
    public Identity identity() {
        return new Identity(fingerprint, attemptId, new DecisionKey(KIND, resourceId));
    }
}
