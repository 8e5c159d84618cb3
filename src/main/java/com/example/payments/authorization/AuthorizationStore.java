package com.example.payments.authorization;

import java.util.Optional;

/**
 * Keeps processed {@link Authorization}s for {@code GET /v1/authorizations/{id}}. In-memory by default; a shared
 * backend (Redis) lets any replica answer for an authorization another replica processed.
 */
public interface AuthorizationStore extends AutoCloseable {

    /**
     * Stores an authorization.
     *
     * @param authorization the record (no PAN, no CVC)
     * @throws StoreUnavailableException when the backend cannot be reached
     */
    void save(Authorization authorization);

    /**
     * Looks an authorization up.
     *
     * @param id the authorization id
     * @return the record, or empty when unknown or past retention
     * @throws StoreUnavailableException when the backend cannot be reached
     */
    Optional<Authorization> find(String id);

    @Override
    default void close() {
    }

    /**
     * The store's backend cannot be reached; the API answers 503 with {@code Retry-After}.
     */
    final class StoreUnavailableException extends RuntimeException {

        /**
         * Creates the exception.
         *
         * @param message what failed
         * @param cause   the client library's exception
         */
        public StoreUnavailableException(String message, Throwable cause) {
            super(message, cause);
        }
    }
}
