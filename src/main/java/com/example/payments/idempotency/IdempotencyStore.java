package com.example.payments.idempotency;

import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * Where idempotency keys and recorded decisions live: in-memory for one replica, Redis or PostgreSQL (the system of
 * record, {@code database.PostgresIdempotencyStore}) when several replicas share the work. Each method is one atomic step of the store. Records hold fingerprints, fencing
 * tokens and decision bodies only, never a PAN or CVC.
 *
 * <p>The contract, run against every backend by one test suite ({@code IdempotencyStoreContract}):
 * <ul>
 *     <li>A key record is IN_FLIGHT (fingerprint, token, lease) or COMPLETED (fingerprint, decision). An IN_FLIGHT
 *     record whose lease ran out counts as absent ("lapsed") for every operation.</li>
 *     <li>Decisions are insert-if-absent, keyed by {@link DecisionKey}, and found for {@code idempotency.retention}
 *     after they were recorded, never longer. A completed key is found no longer than its decision.</li>
 *     <li>Fencing: {@link #claim} gives each acquisition a token greater than every token of that key before it, also
 *     after the store lost its data (the token is derived from a clock plus a counter). {@link #renew} and
 *     {@link #release} act only while the record is IN_FLIGHT with the caller's token; {@link #recordAndComplete}
 *     completes the key only then, or when the key is absent (a lapsed owner whose key nobody else took).</li>
 *     <li>Quotas: per scope (merchant), on acquisitions only, see {@link #claim}.</li>
 * </ul>
 */
public interface IdempotencyStore extends AutoCloseable {

    /**
     * Claims a key, or recovers its decision, in one atomic step. In this order: the record exists with a fingerprint
     * of none of the identities: {@link Claim.Mismatch}; a decision is recorded for the matching identity (or, with
     * no record, for any identity): the key is completed with it (if it was not) and {@link Claim.Replay};
     * IN_FLIGHT under a live lease: {@link Claim.InFlight}; otherwise the caller acquires it ({@link Claim.Acquired},
     * under the matching identity or the first) unless taking the key anew would exceed the quota of its scope:
     * {@link Claim.OverQuota}, nothing written. An in-memory store may answer {@link Claim.Full}.
     *
     * <p>Quota accounting, per scope ({@link RequestIdentities#scopeOf} of the lookup key, the merchant), global to
     * everyone sharing the store: a record counts as in flight from its acquisition until it is released, completed
     * or its lease lapses, and as a record until it is released or expires (lease, or retention once completed).
     * Only an acquisition is checked, and only when it would add to a count (a key taken over after a lapsed lease
     * whose record is still counted adds nothing). Renewals keep a record counted; completions, recoveries and
     * recordings of an absent key are never refused.
     *
     * @param lookupKey  operation + merchant + idempotency key, built by {@link RequestIdentities#lookupKey}
     * @param identities the request's identities, current secret first (one or two)
     * @param lease      lifetime of the IN_FLIGHT record without renewal ({@code idempotency.in-flight-lease})
     * @param quota      the bounds of the lookup key's scope ({@code idempotency.merchant-quota.*})
     * @return the claim
     * @throws UnavailableException when the store cannot be reached or did not confirm the write
     */
    Claim claim(String lookupKey, List<Identity> identities, Duration lease, Quota quota);

    /**
     * Extends the lease of a key held with this token.
     *
     * @param lookupKey key
     * @param token     the claim's fencing token
     * @param lease     new lease from now
     * @return {@code false} when the lease is lost: the record is gone, lapsed, completed or held with another token
     * @throws UnavailableException when the store cannot be reached
     */
    boolean renew(String lookupKey, long token, Duration lease);

    /**
     * Records a decision (insert-if-absent; this write commits even when the completion is refused), then completes
     * the key with the recorded decision when it is IN_FLIGHT with this token or absent.
     *
     * @param lookupKey   key
     * @param identity    the identity the key is held under (its fingerprint is written if the key is absent)
     * @param token       the claim's fencing token
     * @param decision    the decision to record; its key must be {@code identity.decision()}
     * @param retention   how long the decision and the completed key are kept ({@code idempotency.retention})
     * @return the winner and what was written
     * @throws UnavailableException when the store cannot be reached or did not confirm the write: whether the
     *                              decision was recorded is then unknown
     */
    Recorded recordAndComplete(String lookupKey, Identity identity, long token, Decision decision, Duration retention);

    /**
     * Deletes a key held with this token, so that a retry can run.
     *
     * @param lookupKey key
     * @param token     the claim's fencing token
     * @return {@code false} when the record is gone, completed, or held with another token (nothing is deleted)
     * @throws UnavailableException when the store cannot be reached
     */
    boolean release(String lookupKey, long token);

    /**
     * Looks a decision up, for {@code GET} of the resource it created.
     *
     * @param key where it would be recorded
     * @return the decision, or empty when unknown or recorded longer than the retention ago
     * @throws UnavailableException when the store cannot be reached
     */
    Optional<Decision> findDecision(DecisionKey key);

    /**
     * Whether a call may block: network I/O, a wait for a lock or a connection. The registry makes the writes of a
     * store that blocks on a virtual thread of its own, waited for without giving in to interrupts, so that a request
     * thread interrupted by the end of the drain still records or releases its key (a client library fails at once on
     * an interrupted thread). A store that cannot block (it works in this process's memory, and does not notice an
     * interrupt) is called on the request's own thread, without the hop.
     *
     * @return {@code true} (the default, and Redis and PostgreSQL) to make every write off the request thread;
     *         {@code false} for the in-memory store
     */
    default boolean blocks() {
        return true;
    }

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
