package com.example.payments.authorization;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * {@link AuthorizationStore} in this process's memory, for a single replica. Records are kept for the idempotency
 * retention ({@code idempotency.retention}, default PT24H) and dropped by {@link #sweep()}; every stored record
 * belongs to one idempotency key, so {@code idempotency.max-keys} bounds their number too.
 */
public final class InMemoryAuthorizationStore implements AuthorizationStore {

    private record Entry(Authorization authorization, long expiresAtNanos) {
    }

    private final Map<String, Entry> records = new ConcurrentHashMap<>();
    private final Duration retention;

    private InMemoryAuthorizationStore(Duration retention) {
        this.retention = retention;
    }

    /**
     * Creates the store.
     *
     * @param retention how long a record is kept
     * @return the store
     */
    public static InMemoryAuthorizationStore create(Duration retention) {
        return new InMemoryAuthorizationStore(retention);
    }

    @Override
    public void save(Authorization authorization) {
        records.put(authorization.id(), new Entry(authorization, System.nanoTime() + retention.toNanos()));
    }

    @Override
    public Optional<Authorization> find(String id) {
        Entry entry = records.get(id);
        if (entry == null || entry.expiresAtNanos() - System.nanoTime() < 0) {
            return Optional.empty();
        }
        return Optional.of(entry.authorization());
    }

    /**
     * Drops records past retention; called by the retention sweeper.
     *
     * @return how many were dropped
     */
    public int sweep() {
        long now = System.nanoTime();
        int before = records.size();
        records.values().removeIf(e -> e.expiresAtNanos() - now < 0);
        return before - records.size();
    }
}
