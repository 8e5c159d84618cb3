package com.example.payments.idempotency;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * {@link IdempotencyStore} in this process's memory: correct for a single replica only (a retry routed to another
 * replica would not see the record). Bounded by {@code idempotency.max-keys} (default 100000): when full, new keys are
 * refused ({@link Claim.Full}) rather than evicting a record before its retention ends, because evicting one would let
 * a retry authorize twice. Expired records are dropped by {@link #sweep()} (called by the retention sweeper) and
 * treated as absent by every operation in the meantime.
 */
public final class InMemoryIdempotencyStore implements IdempotencyStore {

    /** One record; {@code response == null} means IN_FLIGHT. {@code expiresAtNanos} is the lease or the retention. */
    private record Entry(String fingerprint, String owner, StoredResponse response, long expiresAtNanos) {

        boolean expired(long now) {
            return expiresAtNanos - now < 0;
        }

        boolean inFlightFor(String candidate) {
            return response == null && owner.equals(candidate);
        }
    }

    private final Map<String, Entry> records = new ConcurrentHashMap<>();
    private final AtomicInteger size = new AtomicInteger();
    private final int maxKeys;

    private InMemoryIdempotencyStore(int maxKeys) {
        this.maxKeys = maxKeys;
    }

    /**
     * Creates the store.
     *
     * @param maxKeys {@code idempotency.max-keys}: most records held at once
     * @return the store
     */
    public static InMemoryIdempotencyStore create(int maxKeys) {
        return new InMemoryIdempotencyStore(maxKeys);
    }

    @Override
    public Claim claim(String lookupKey, String fingerprint, String owner, Duration lease) {
        AtomicReference<Claim> result = new AtomicReference<>();
        records.compute(lookupKey, (key, existing) -> {
            long now = System.nanoTime();
            if (existing == null || existing.expired(now)) {
                if (existing == null && !reserve()) {
                    result.set(new Claim.Full());
                    return null;
                }
                result.set(new Claim.Acquired(lookupKey, owner));
                return new Entry(fingerprint, owner, null, now + lease.toNanos());
            }
            if (!existing.fingerprint().equals(fingerprint)) {
                result.set(new Claim.Mismatch());
            } else if (existing.response() != null) {
                result.set(new Claim.Replay(existing.response()));
            } else {
                result.set(new Claim.InFlight());
            }
            return existing;
        });
        return result.get();
    }

    @Override
    public boolean renew(String lookupKey, String owner, Duration lease) {
        return update(lookupKey, owner, e -> new Entry(e.fingerprint(), owner, null, System.nanoTime() + lease.toNanos()));
    }

    @Override
    public boolean complete(String lookupKey, String owner, StoredResponse response, Duration retention) {
        return update(lookupKey, owner,
                      e -> new Entry(e.fingerprint(), owner, response, System.nanoTime() + retention.toNanos()));
    }

    @Override
    public boolean release(String lookupKey, String owner) {
        return update(lookupKey, owner, e -> null);
    }

    /**
     * Drops every expired record (leases not renewed, responses past retention).
     *
     * @return how many were dropped
     */
    public int sweep() {
        int dropped = 0;
        for (Map.Entry<String, Entry> record : records.entrySet()) {
            long now = System.nanoTime();
            if (record.getValue().expired(now) && records.remove(record.getKey(), record.getValue())) {
                size.decrementAndGet();
                dropped++;
            }
        }
        return dropped;
    }

    /**
     * Records currently held, expired ones included until swept.
     *
     * @return count
     */
    public int size() {
        return size.get();
    }

    private boolean update(String lookupKey, String owner, java.util.function.UnaryOperator<Entry> change) {
        AtomicReference<Boolean> done = new AtomicReference<>(false);
        records.computeIfPresent(lookupKey, (key, existing) -> {
            if (existing.expired(System.nanoTime()) || !existing.inFlightFor(owner)) {
                return existing;
            }
            done.set(true);
            Entry next = change.apply(existing);
            if (next == null) {
                size.decrementAndGet();
            }
            return next;
        });
        return done.get();
    }

    private boolean reserve() {
        while (true) {
            int current = size.get();
            if (current >= maxKeys) {
                return false;
            }
            if (size.compareAndSet(current, current + 1)) {
                return true;
            }
        }
    }
}
