package com.example.payments.idempotency;

import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicInteger;


/**
 * {@link KeyBindings} in this process's memory, for the in-memory resource store: kept as long as the process, never
 * evicted; at {@code authorization.in-memory.max-resources} bindings a new key is refused (503).
 */
public final class InMemoryKeyBindings implements KeyBindings {

    private final ConcurrentMap<String, String> fingerprints = new ConcurrentHashMap<>();
    private final AtomicInteger size = new AtomicInteger();
    private final int max;

    private InMemoryKeyBindings(int max) {
        this.max = max;
    }

    /**
     * Creates an empty table.
     *
     * @param max bindings held at most ({@code authorization.in-memory.max-resources}), at least 1
     * @return the table
     */
    public static InMemoryKeyBindings create(int max) {
        if (max < 1) {
            throw new IllegalArgumentException("max must be >= 1");
        }
        return new InMemoryKeyBindings(max);
    }

    @Override
    public Bound bind(String lookupKey, List<Identity> identities, int preferred) {
        String bound = fingerprints.get(lookupKey);
        if (bound == null) {
            if (size.incrementAndGet() > max) {
                size.decrementAndGet();
                throw new StoreFullException("the in-memory resource store holds "
                        + "authorization.in-memory.max-resources (" + max + ") idempotency keys");
            }
            bound = fingerprints.putIfAbsent(lookupKey, identities.get(preferred).fingerprint());
            if (bound != null) {
                size.decrementAndGet();
            } else {
                return new Bound(preferred, true);
            }
        }
        return new Bound(KeyBindings.indexOf(identities, bound), false);
    }

    @Override
    public void unbind(String lookupKey, String fingerprint) {
        if (fingerprints.remove(lookupKey, fingerprint)) {
            size.decrementAndGet();
        }
    }
}
