package com.example.payments.idempotency;

/**
 * An in-memory store holds as many entries as it may ({@code authorization.in-memory.max-resources}); nothing was
 * written. Answered 503 with {@code Retry-After}: nothing is evicted early, since a forgotten resource or key binding
 * could let one payment happen twice.
 */
public final class StoreFullException extends RuntimeException {

    /**
     * Creates the exception.
     *
     * @param message what is full
     */
    public StoreFullException(String message) {
        super(message, null, false, false);
    }
}
