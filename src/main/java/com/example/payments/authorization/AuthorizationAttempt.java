package com.example.payments.authorization;

/**
 * One call to the {@link Authorizer}.
 *
 * @param attemptId stable id derived from merchant and idempotency key: identical for every retry of the same key,
 *                  so the issuer can deduplicate ({@code att_} + 32 hex characters)
 * @param request   the validated request, card included
 */
public record AuthorizationAttempt(String attemptId, AuthorizationRequest request) {
}
