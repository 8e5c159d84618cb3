package com.example.payments.idempotency;

import java.time.Duration;

/**
 * Where idempotency records live: in-memory for one replica, Redis when several replicas share the work. Every
 * operation is atomic; every write that follows a claim is a compare-and-set on the owner token, so a process whose
 * lease expired can never overwrite or release a record another process now owns. Records hold the fingerprint and the
 * stored response only, never a PAN or CVC.
 *
 * <p>All backends pass the same contract test suite.
 */
public interface IdempotencyStore extends AutoCloseable {

    /**
     * Claims a key atomically: the first writer wins.
     *
     * @param lookupKey   merchant + idempotency key
     * @param fingerprint HMAC of the request's canonical form
     * @param owner       token identifying this request in this process
     * @param lease       how long the IN_FLIGHT record lives without renewal ({@code idempotency.in-flight-lease})
     * @return {@link Claim.Acquired}, {@link Claim.Replay}, {@link Claim.InFlight}, {@link Claim.Mismatch} or
     *         {@link Claim.Full}
     * @throws UnavailableException when the backend cannot be reached
     */
    Claim claim(String lookupKey, String fingerprint, String owner, Duration lease);

    /**
     * Extends the lease of an IN_FLIGHT record this owner holds.
     *
     * @param lookupKey key
     * @param owner     owner token
     * @param lease     new lease from now
     * @return {@code false} when the record is gone or owned by someone else
     * @throws UnavailableException when the backend cannot be reached
     */
    boolean renew(String lookupKey, String owner, Duration lease);

    /**
     * Stores the response of an IN_FLIGHT record this owner holds and keeps it for the retention.
     *
     * @param lookupKey key
     * @param owner     owner token
     * @param response  the response to replay
     * @param retention how long to keep it ({@code idempotency.retention})
     * @return {@code false} when the record is gone or owned by someone else (nothing is written)
     * @throws UnavailableException when the backend cannot be reached
     */
    boolean complete(String lookupKey, String owner, StoredResponse response, Duration retention);

    /**
     * Deletes an IN_FLIGHT record this owner holds, so a retry can run.
     *
     * @param lookupKey key
     * @param owner     owner token
     * @return {@code false} when the record is gone, completed, or owned by someone else
     * @throws UnavailableException when the backend cannot be reached
     */
    boolean release(String lookupKey, String owner);

    @Override
    default void close() {
    }

    /**
     * The backend cannot be reached or did not confirm a write; the request fails closed (503 with
     * {@code Retry-After}) and the authorizer is not run.
     */
    final class UnavailableException extends RuntimeException {

        /**
         * Creates the exception.
         *
         * @param message what failed
         * @param cause   the client library's exception, or {@code null}
         */
        public UnavailableException(String message, Throwable cause) {
            super(message, cause);
        }
    }
}
