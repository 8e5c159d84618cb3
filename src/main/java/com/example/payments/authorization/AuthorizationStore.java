package com.example.payments.authorization;

import java.time.Instant;
import java.util.Optional;

/**
 * The resource store of authorizations, the system of record of their lifecycle: in memory for one replica in
 * development ({@link InMemoryAuthorizationStore}), PostgreSQL when replicas share the work
 * ({@code database.PostgresAuthorizationStore}). Resources are never deleted by the service; the idempotency
 * retention bounds replays, never how long an authorization can be read.
 *
 * <p>An authorization is written here before its decision is recorded in the idempotency registry, so a replay never
 * answers 201 for something {@code GET} cannot find.
 */
public interface AuthorizationStore {

    /**
     * Creates an authorization, insert-if-absent by id: every execution of one attempt builds the same record, and
     * the first write wins.
     *
     * @param authorization the new authorization
     * @return the stored one: this one, or the one an earlier execution of the attempt wrote
     * @throws com.example.payments.idempotency.StoreFullException when an in-memory store holds as many resources as it may (503)
     * @throws com.example.payments.idempotency.IdempotencyStore.UnavailableException when the store cannot be
     *                              reached: whether it was written is unknown (503)
     */
    AuthorizationRecord create(AuthorizationRecord authorization);

    /**
     * Whether {@link #create} writes nothing and returns its input, the recording of the decision writing the
     * authorization instead ({@code database.PostgresAuthorizationStore.writtenWithDecisions}): which attempt's
     * authorization is stored is then known only once the decision is recorded.
     *
     * @return {@code false} unless so; by default {@code false}
     */
    default boolean writtenByRecordings() {
        return false;
    }

    /**
     * Reads an authorization's current state.
     *
     * @param id the resource id
     * @return the authorization, or empty when unknown
     * @throws com.example.payments.idempotency.IdempotencyStore.UnavailableException when the store cannot be
     *                              reached (503)
     */
    Optional<AuthorizationRecord> find(String id);

    /**
     * The reserve step of a capture, a void or an expiry ({@link Lifecycle#reserve}; {@link OperationRecord#kind()}
     * says which), in one conditional write: the check of the
     * authorization as it stands and the reservation, with the pending operation, commit together or not at all.
     * Insert-if-absent by operation id: a retry of the request finds its operation ({@link Existing}).
     *
     * @param authorizationId the parent
     * @param pending         the operation, {@code PENDING}; its amount is ignored for a void (the remainder is)
     * @param maxCaptures     {@code authorization.max-captures}
     * @param now             the time of the request
     * @return what happened
     * @throws com.example.payments.idempotency.StoreFullException when an in-memory store holds as many resources as it
     *                              may and the operation is a capture or a void (503; nothing written)
     * @throws com.example.payments.idempotency.IdempotencyStore.UnavailableException when the store cannot be reached
     */
    Reservation reserve(String authorizationId, OperationRecord pending, int maxCaptures, Instant now);

    /**
     * The settle step ({@link Lifecycle#settle}): applies the acquirer's answer to the operation and its
     * authorization together, once (an operation already settled is returned as it is).
     *
     * @param operation   the pending operation
     * @param succeeded   the acquirer applied it
     * @param declineCode its code when declined
     * @param now         the time of the answer
     * @return the settled operation
     * @throws com.example.payments.idempotency.IdempotencyStore.UnavailableException when the store cannot be reached
     */
    OperationRecord settle(OperationRecord operation, boolean succeeded, String declineCode, Instant now);

    /**
     * The operations of an authorization still {@code PENDING}: reserved, their acquirer call's outcome unknown (a 502
     * or 504 whose client has not retried), oldest first. The expiry worker sends them again with their own attempt
     * ids before it expires the authorization.
     *
     * @param authorizationId the authorization's id
     * @return its pending captures and voids, often none
     * @throws com.example.payments.idempotency.IdempotencyStore.UnavailableException when the store cannot be reached
     */
    java.util.List<OperationRecord> pendingOperations(String authorizationId);

    /**
     * Reads a capture or a void.
     *
     * @param id the operation id
     * @return the operation, or empty when unknown
     * @throws com.example.payments.idempotency.IdempotencyStore.UnavailableException when the store cannot be reached
     */
    Optional<OperationRecord> findOperation(String id);

    /**
     * Claims approved authorizations past their {@code expiresAt} for the expiry worker, oldest expiry first, in one
     * conditional write: those no worker (of this replica or another) claimed until after {@code now} are claimed
     * until {@code now + lease} and returned; the others are skipped. So replicas expiring side by side never take the
     * same authorization, and one whose claim lapsed (its worker died or its void's outcome stayed unknown) is taken
     * again, its pending expiry retried with the same attempt id.
     *
     * @param now   the time
     * @param limit at most this many
     * @param lease how long the claim holds, longer than the worker takes to expire one (its acquirer call included)
     * @return the claimed authorizations
     * @throws com.example.payments.idempotency.IdempotencyStore.UnavailableException when the store cannot be reached
     */
    java.util.List<AuthorizationRecord> claimExpired(Instant now, int limit, java.time.Duration lease);

    /** What a reserve step did. */
    sealed interface Reservation {
    }

    /**
     * Reserved: the operation is pending, the authorization holds its reservation.
     *
     * @param operation the pending operation, with the amount reserved
     */
    record Reserved(OperationRecord operation) implements Reservation {
    }

    /**
     * The operation exists already (a retry of the request): pending or settled.
     *
     * @param operation the operation as it stands
     */
    record Existing(OperationRecord operation) implements Reservation {
    }

    /**
     * The lifecycle refused it; nothing was written.
     *
     * @param refusal why, with its status code
     */
    record Refused(Lifecycle.Refused refusal) implements Reservation {
    }

    /** No authorization with this id. */
    record NotFound() implements Reservation {
    }
}
