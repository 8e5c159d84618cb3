package com.example.payments.authorization;

/**
 * One capture or void sent to the acquirer ({@link Authorizer#capture}, {@link Authorizer#voidRemainder}).
 *
 * @param attemptId              the operation's own attempt id ({@code att_} + 32 hex characters): the same for every
 *                               retry of one request, so the acquirer deduplicates it; sent as its
 *                               {@code Idempotency-Key}
 * @param authorizationAttemptId the attempt id the authorization was approved under: how the acquirer knows it
 * @param amount                 minor units to capture, or the uncaptured remainder a void releases
 * @param currency               ISO 4217 code of the authorization
 */
public record AcquirerOperation(String attemptId, String authorizationAttemptId, long amount, String currency) {
}
