package com.example.payments.authorization;

import java.time.Instant;
import java.util.Objects;

/**
 * The seam a fork replaces: the call to the card issuer (or an acquirer / payment processor).
 *
 * <p>Implementations are called on a virtual thread and bounded by {@code authorizer.timeout}: when it expires the
 * calling thread is interrupted, so a blocking implementation should let {@link InterruptedException} (or an
 * interrupted I/O call) end the call. One that cannot block says so ({@link #blocks()}) and is called on the request's
 * own thread instead. An implementation should pass {@link AuthorizationAttempt#attemptId()} to the
 * issuer as its deduplication key: it is the same for every retry of one idempotency key, so an issuer can refuse to
 * authorize twice even if this service loses its idempotency record.
 */
public interface Authorizer {

    /**
     * Asks the issuer for a decision.
     *
     * @param attempt the attempt: stable attempt id, merchant, amount and card (with PAN)
     * @return approved, or declined with a decline code, with the issuer's time of the decision
     * @throws IssuerUnavailableException when the issuer could not be reached or answered with an error; the caller
     *                                    answers 502 and releases the idempotency key so the client may retry
     * @throws InterruptedException       when the timeout expired or the process is shutting down
     */
    Decision authorize(AuthorizationAttempt attempt) throws IssuerUnavailableException, InterruptedException;

    /**
     * Captures part or all of an approved authorization. An acquirer deduplicates on the operation's attempt id (a
     * retry after an unknown outcome sends the same one) and refuses to capture more than it authorized. The default
     * declines with {@code not_supported}: a fork whose acquirer captures implements it.
     *
     * @param operation the capture
     * @return approved (captured), or declined with a code
     * @throws IssuerUnavailableException when the acquirer could not be reached: the outcome is unknown, the
     *                                    reservation is kept and the retry sends the same attempt id
     * @throws InterruptedException       when the timeout expired or the process is shutting down
     */
    default Decision capture(AcquirerOperation operation) throws IssuerUnavailableException, InterruptedException {
        return Decision.decline("not_supported", java.time.Instant.now());
    }

    /**
     * Voids the uncaptured remainder of an approved authorization (a void request, or its expiry). Deduplicated on
     * the operation's attempt id. The default declines with {@code not_supported}.
     *
     * @param operation the void, its amount the remainder
     * @return approved (voided), or declined with a code
     * @throws IssuerUnavailableException when the acquirer could not be reached: the outcome is unknown
     * @throws InterruptedException       when the timeout expired or the process is shutting down
     */
    default Decision voidRemainder(AcquirerOperation operation)
            throws IssuerUnavailableException, InterruptedException {
        return Decision.decline("not_supported", java.time.Instant.now());
    }

    /**
     * Reverses an authorization attempt whose outcome is unknown (ISO 8583 reversal advice): the acquirer releases the
     * hold if it approved the attempt, and does nothing if it never did. Applied at most once per reversal id; the
     * reconciler sends the same reversal id until an answer confirms it. The default throws: an acquirer that cannot
     * reverse leaves every unknown outcome to the client's retry (and the unresolved-outcome alert).
     *
     * @param reversal the reversal id and the attempt it reverses
     * @return approved when the attempt was reversed, declined with {@code not_approved} when there was nothing to
     *         reverse; either confirms the reversal
     * @throws IssuerUnavailableException when the acquirer could not be reached or did not confirm: send it again
     * @throws InterruptedException       when the timeout expired or the process is shutting down
     */
    default Decision reverse(Reversal reversal) throws IssuerUnavailableException, InterruptedException {
        throw new IssuerUnavailableException("this authorizer cannot reverse");
    }

    /**
     * A reversal of one authorization attempt.
     *
     * @param reversalId the acquirer's deduplication key for the reversal: the same on every send
     * @param attemptId  the authorization attempt it reverses
     */
    record Reversal(String reversalId, String attemptId) {
    }

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
     * <p>{@code decidedAt} becomes the authorization's {@code createdAt}. It must be the issuer's own time of the
     * decision, the same on every answer for one attempt id (an acquirer's transaction timestamp, which it repeats when
     * it answers a retry from its idempotency record), never "now" on this side: when the idempotency store loses a
     * decision (a Redis restart without persistence, a failover), the retry runs the work again, the issuer answers
     * the same attempt id again, and the authorization rebuilt from that answer must be byte-identical to the first
     * one (docs/idempotency.md).
     *
     * @param approved    {@code true} to approve
     * @param declineCode reason when declined ({@code card_declined}, {@code insufficient_funds},
     *                    {@code limit_exceeded}, ...), {@code null} when approved
     * @param decidedAt   when the issuer decided (UTC; millisecond precision is kept)
     */
    record Decision(boolean approved, String declineCode, Instant decidedAt) {

        /**
         * Checks the decision time.
         *
         * @throws NullPointerException when {@code decidedAt} is null
         */
        public Decision {
            Objects.requireNonNull(decidedAt, "decidedAt");
        }

        /**
         * An approval.
         *
         * @param decidedAt when the issuer decided
         * @return decision
         */
        public static Decision approve(Instant decidedAt) {
            return new Decision(true, null, decidedAt);
        }

        /**
         * A decline.
         *
         * @param code      decline code
         * @param decidedAt when the issuer decided
         * @return decision
         */
        public static Decision decline(String code, Instant decidedAt) {
            return new Decision(false, code, decidedAt);
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
