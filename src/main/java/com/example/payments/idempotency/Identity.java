package com.example.payments.idempotency;

/**
 * What one request is under one fingerprint secret: its fingerprint, the attempt id the issuer deduplicates on, and
 * the key its decision is recorded under. Computed by {@link RequestIdentities}; during a secret rotation a request
 * has two, the current one first.
 *
 * @param fingerprint HMAC-SHA256 of the request's canonical form, 64 hex characters
 * @param attemptId   {@code att_} + 32 hex characters: the same for every retry of one request, different for another
 *                    request under the same key, operation and merchant
 * @param decision    where the decision of this attempt is recorded
 */
public record Identity(String fingerprint, String attemptId, DecisionKey decision) {
}
