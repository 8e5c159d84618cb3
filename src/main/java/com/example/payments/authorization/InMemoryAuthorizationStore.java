package com.example.payments.authorization;

import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicInteger;

import com.example.payments.idempotency.StoreFullException;

/**
 * {@link AuthorizationStore} in this process's memory: development and one replica only (a restart forgets every
 * authorization; staging and prod refuse it). Bounded by {@code authorization.in-memory.max-resources}: nothing is
 * ever evicted (an evicted authorization could be captured twice or lost), so beyond the bound a new authorization
 * is refused with {@link StoreFullException}.
 */
public final class InMemoryAuthorizationStore implements AuthorizationStore {

    private final ConcurrentMap<String, AuthorizationRecord> authorizations = new ConcurrentHashMap<>();
    private final AtomicInteger size = new AtomicInteger();
    private final int maxResources;

    private InMemoryAuthorizationStore(int maxResources) {
        this.maxResources = maxResources;
    }

    /**
     * Creates an empty store.
     *
     * @param maxResources {@code authorization.in-memory.max-resources}, at least 1
     * @return the store
     * @throws IllegalArgumentException when {@code maxResources < 1}
     */
    public static InMemoryAuthorizationStore create(int maxResources) {
        if (maxResources < 1) {
            throw new IllegalArgumentException("maxResources must be >= 1");
        }
        return new InMemoryAuthorizationStore(maxResources);
    }

    @Override
    public AuthorizationRecord create(AuthorizationRecord authorization) {
        AuthorizationRecord existing = authorizations.get(authorization.id());
        if (existing != null) {
            return existing;
        }
        if (size.incrementAndGet() > maxResources) {
            size.decrementAndGet();
            throw new StoreFullException("the in-memory resource store holds authorization.in-memory.max-resources ("
                                    + maxResources + ") authorizations");
        }
        AuthorizationRecord winner = authorizations.putIfAbsent(authorization.id(), authorization);
        if (winner != null) {
            size.decrementAndGet();
            return winner;
        }
        return authorization;
    }

    @Override
    public Optional<AuthorizationRecord> find(String id) {
        return Optional.ofNullable(authorizations.get(id));
    }

    /**
     * Authorizations held.
     *
     * @return count
     */
    public int size() {
        return size.get();
    }
}
