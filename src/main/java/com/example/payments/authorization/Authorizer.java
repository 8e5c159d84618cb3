package com.example.payments.authorization;

/**
 * The seam a fork replaces: the call to the card issuer (or an acquirer / payment processor).
 *
 * <p>Implementations are called on a virtual thread and bounded by {@code authorizer.timeout}: when it expires the
 * calling thread is interrupted, so a blocking implementation should let {@link InterruptedException} (or an
 * interrupted I/O call) end the call. An implementation should pass {@link AuthorizationAttempt#attemptId()} to the
 * issuer as its deduplication key: it is the same for every retry of one idempotency key, so an issuer can refuse to
 * authorize twice even if this service loses its idempotency record.
 */
public interface Authorizer {

    /**
     * Asks the issuer for a decision.
     *
     * @param attempt the attempt: stable attempt id, merchant, amount and card (with PAN)
     * @return approved, or declined with a decline code
     * @throws IssuerUnavailableException when the issuer could not be reached or answered with an error; the caller
     *                                    answers 502 and releases the idempotency key so the client may retry
     * @throws InterruptedException       when the timeout expired or the process is shutting down
     */
    Decision authorize(AuthorizationAttempt attempt) throws IssuerUnavailableException, InterruptedException;

    /**
     * Whether a call may block: network I/O, a sleep, a wait for another thread. A call that cannot block (it decides
     * from the attempt and memory alone) cannot outlast {@code authorizer.timeout}, so it is made on the request's own
     * virtual thread, without a hop to another thread to bound it.
     *
     * @return {@code true} (the default) to run every call on a thread of its own, bounded by the timeout
     */
    default boolean blocks() {
        return true;
    }

    /**
     * The issuer's answer.
     *
     * @param approved    {@code true} to approve
     * @param declineCode reason when declined ({@code card_declined}, {@code insufficient_funds},
     *                    {@code limit_exceeded}, ...), {@code null} when approved
     */
    record Decision(boolean approved, String declineCode) {

        /**
         * An approval.
         *
         * @return decision
         */
        public static Decision approve() {
            return new Decision(true, null);
        }

        /**
         * A decline.
         *
         * @param code decline code
         * @return decision
         */
        public static Decision decline(String code) {
            return new Decision(false, code);
        }
    }

    /**
     * The issuer could not be reached or failed; the outcome at the issuer is unknown.
     */
    final class IssuerUnavailableException extends Exception {

        /**
         * Creates the exception.
         *
         * @param message what failed, without card data
         */
        public IssuerUnavailableException(String message) {
            super(message);
        }
    }
}
