package com.example.payments.health;

import java.util.Optional;

/**
 * A resource of this replica that can fill up, such as the in-memory idempotency store at
 * {@code idempotency.max-keys}. Readiness answers 503 naming it while it is full, but never counts it toward the
 * circuit breaker: a restart would drop what fills it (records whose retention has not ended) and cure nothing.
 * A flag, no I/O: checked before the dependency checks.
 */
@FunctionalInterface
public interface CapacityCheck {

    /**
     * Whether the resource is full.
     *
     * @return {@code "name: why"}, e.g. {@code "idempotency-store: full: 100000 of 100000 keys held
     *         (idempotency.max-keys)"}, or empty while there is room
     */
    Optional<String> full();
}
