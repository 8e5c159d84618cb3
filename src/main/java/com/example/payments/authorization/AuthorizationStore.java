package com.example.payments.authorization;

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
     * Reads an authorization's current state.
     *
     * @param id the resource id
     * @return the authorization, or empty when unknown
     * @throws com.example.payments.idempotency.IdempotencyStore.UnavailableException when the store cannot be
     *                              reached (503)
     */
    Optional<AuthorizationRecord> find(String id);
}
