package com.example.payments.idempotency;

import java.time.Duration;
import java.util.function.Predicate;

import com.example.payments.http.Problem;
import com.example.payments.idempotency.IdempotencyRegistry.ReleaseReason;

/**
 * The work of an {@link IdempotentOperation}, e.g. the issuer call of an authorization: runs at most once per claim,
 * under a lease that covers it, and only when it can finish before the drain deadline.
 */
@FunctionalInterface
public interface Work {

    /**
     * Does the work.
     *
     * @param attempt the attempt id to send as the downstream idempotency key, and the id the resource must carry
     * @return the decision, or why there is none
     * @throws InterruptedException when the drain cut the request off (answered 504 {@code outcome-unknown}, key
     *                              released)
     */
    Outcome perform(Attempt attempt) throws InterruptedException;

    /**
     * One attempt at the work.
     *
     * @param attemptId  stable per request: pass it downstream (the issuer deduplicates on it)
     * @param resourceId the id of the resource this attempt creates, the same for every execution of the attempt
     * @param lookupKey  the key's lookup key ({@link RequestIdentities#lookupKey}): what a later claim of the key
     *                   names, e.g. to resolve an unknown outcome without the client
     * @param identity   the request's identity the key is held under (fingerprint, attempt id, decision key)
     * @param token      the fencing token of the claim this attempt runs under: grows per key, so it tells this
     *                   execution from every other one of the key (0 when there is no claim, e.g. in tests)
     * @param lease      whether the claim's lease still covers a call of the given length and the recording,
     *                   checked locally without a round trip; always {@code true} when there is no claim
     */
    record Attempt(String attemptId, String resourceId, String lookupKey, Identity identity, long token,
                   Predicate<Duration> lease) {

        /**
         * An attempt outside a claim (tests, tools): token 0, a lease that always covers.
         *
         * @param attemptId  the attempt id
         * @param resourceId the resource id
         * @param lookupKey  the lookup key
         * @param identity   the identity
         */
        public Attempt(String attemptId, String resourceId, String lookupKey, Identity identity) {
            this(attemptId, resourceId, lookupKey, identity, 0, call -> true);
        }

        /**
         * An attempt of an identity.
         *
         * @param lookupKey the lookup key
         * @param identity  the identity
         * @return the attempt
         */
        public static Attempt of(String lookupKey, Identity identity) {
            return new Attempt(identity.attemptId(), identity.decision().id(), lookupKey, identity);
        }

        /**
         * An attempt of an identity under a claim.
         *
         * @param lookupKey the lookup key
         * @param identity  the identity
         * @param token     the claim's fencing token
         * @param lease     whether the claim's lease covers a call of a given length and the recording
         * @return the attempt
         */
        public static Attempt of(String lookupKey, Identity identity, long token, Predicate<Duration> lease) {
            return new Attempt(identity.attemptId(), identity.decision().id(), lookupKey, identity, token, lease);
        }

        /**
         * Whether the claim's lease still covers a call and the recording.
         *
         * @param call the call's longest duration, e.g. {@code authorizer.timeout}; {@link Duration#ZERO} for the
         *             recording alone
         * @return {@code false} once another execution may hold the key
         */
        public boolean leaseCovers(Duration call) {
            return lease.test(call);
        }
    }

    /** What the work came to. */
    sealed interface Outcome {
    }

    /**
     * A decision: the resource's body (its id is {@link Attempt#resourceId()}), answered 201 once recorded.
     *
     * @param body              the body, sent byte for byte by the 201, every replay and {@code GET}
     * @param whenRecordedFirst runs once per decision, on the execution whose decision was recorded first (for
     *                          counters)
     * @param attemptId         the attempt id the downstream decided on, recorded with the decision; {@code null}
     *                          for the request's own ({@link Identity#attemptId()}), which is what the work sends
     *                          unless each execution sends an attempt id of its own
     * @param whenRecorded      runs after every recording of this decision, with its result (which decision is
     *                          stored: this one when {@link Recorded#inserted()}); not run when the recording failed
     */
    record Decided(byte[] body, Runnable whenRecordedFirst, String attemptId,
                   java.util.function.Consumer<Recorded> whenRecorded) implements Outcome {

        /**
         * A decision on the request's own attempt id, nothing to do after its recording but count it.
         *
         * @param body              the body
         * @param whenRecordedFirst runs once per decision, on the execution whose decision was recorded first
         */
        public Decided(byte[] body, Runnable whenRecordedFirst) {
            this(body, whenRecordedFirst, null, recorded -> { });
        }

        /**
         * The identity the decision is recorded under: the request's, with the attempt id that decided.
         *
         * @param identity the identity the key is held under
         * @return {@code identity} itself when the attempt id is the request's
         */
        public Identity recordedAs(Identity identity) {
            return attemptId == null || attemptId.equals(identity.attemptId()) ? identity
                    : new Identity(identity.fingerprint(), attemptId, identity.decision());
        }
    }

    /**
     * No decision, outcome unknown downstream: the key is released so that a retry runs the work again (with the same
     * attempt id).
     *
     * @param problem           the answer, e.g. 502 issuer unavailable
     * @param reason            why the key is released
     * @param retryAfterSeconds the answer's {@code Retry-After} in s, 0 for none (e.g. 503 resource store full)
     */
    record Undecided(Problem problem, ReleaseReason reason, long retryAfterSeconds) implements Outcome {

        /**
         * No decision, answered without {@code Retry-After}.
         *
         * @param problem the answer
         * @param reason  why the key is released
         */
        public Undecided(Problem problem, ReleaseReason reason) {
            this(problem, reason, 0);
        }
    }
}
