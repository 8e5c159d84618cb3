package com.example.payments.idempotency;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * {@link IdempotencyStore} in this process's memory: correct for a single replica only (a retry routed to another
 * replica would not see the record). Bounded by {@code idempotency.max-keys} (default 100000): when full, new keys are
 * refused ({@link Claim.Full}) rather than evicting a record before its retention ends, because evicting one would let
 * a retry authorize twice. Expired records and decisions are dropped by {@link #sweep()} (called by the retention
 * sweeper) and treated as absent by every operation in the meantime.
 *
 * <p>Every operation on a key, decisions included, runs inside one {@link ConcurrentHashMap#compute} of that key, so
 * a claim and a recording of the same key never interleave.
 */
public final class InMemoryIdempotencyStore implements IdempotencyStore {

    /**
     * One key record: IN_FLIGHT while {@code decision == null}. {@code expiresAtNanos} is the lease, or once completed
     * the decision's retention. An expired entry counts as absent; it stays until swept so that the next claim's token
     * keeps growing.
     */
    private record Entry(String fingerprint, long token, DecisionKey decision, long expiresAtNanos) {

        boolean live(long now) {
            return expiresAtNanos - now > 0;
        }

        boolean heldWith(long candidate, long now) {
            return decision == null && token == candidate && live(now);
        }
    }

    private record Stored(byte[] body, long expiresAtNanos) {
    }

    private final Map<String, Entry> records = new ConcurrentHashMap<>();
    private final Map<DecisionKey, Stored> decisions = new ConcurrentHashMap<>();
    private final AtomicInteger size = new AtomicInteger();
    private final int maxKeys;

    private InMemoryIdempotencyStore(int maxKeys) {
        this.maxKeys = maxKeys;
    }

    /**
     * Creates the store.
     *
     * @param maxKeys {@code idempotency.max-keys}: most key records held at once
     * @return the store
     */
    public static InMemoryIdempotencyStore create(int maxKeys) {
        return new InMemoryIdempotencyStore(maxKeys);
    }

    @Override
    public Claim claim(String lookupKey, List<Identity> identities, Duration lease) {
        AtomicReference<Claim> result = new AtomicReference<>();
        records.compute(lookupKey, (key, existing) -> {
            long now = System.nanoTime();
            Entry current = existing != null && existing.live(now) ? existing : null;
            int matched = current == null ? -1 : indexOf(identities, current.fingerprint());
            if (current != null && matched < 0) {
                result.set(new Claim.Mismatch());
                return existing;
            }
            for (int i = 0; i < identities.size(); i++) {
                if (matched >= 0 && i != matched) {
                    continue;
                }
                Optional<Decision> decision = find(identities.get(i).decision(), now);
                if (decision.isPresent()) {
                    boolean recovered = current == null || current.decision() == null;
                    result.set(new Claim.Replay(decision.get(), recovered));
                    if (existing == null) {
                        size.incrementAndGet();
                    }
                    long token = existing == null ? 0 : existing.token();
                    return new Entry(identities.get(i).fingerprint(), token, decision.get().key(),
                                     decisions.get(decision.get().key()).expiresAtNanos());
                }
            }
            if (current != null && current.decision() == null) {
                result.set(new Claim.InFlight());
                return existing;
            }
            if (existing == null && !reserve()) {
                result.set(new Claim.Full());
                return null;
            }
            int identity = Math.max(matched, 0);
            long token = nextToken(existing);
            result.set(new Claim.Acquired(lookupKey, token, identity));
            return new Entry(identities.get(identity).fingerprint(), token, null, now + lease.toNanos());
        });
        return result.get();
    }

    @Override
    public boolean renew(String lookupKey, long token, Duration lease) {
        AtomicReference<Boolean> renewed = new AtomicReference<>(false);
        records.computeIfPresent(lookupKey, (key, existing) -> {
            long now = System.nanoTime();
            if (!existing.heldWith(token, now)) {
                return existing;
            }
            renewed.set(true);
            return new Entry(existing.fingerprint(), token, null, now + lease.toNanos());
        });
        return renewed.get();
    }

    @Override
    public Recorded recordAndComplete(String lookupKey, Identity identity, long token, Decision decision,
                                      Duration retention) {
        AtomicReference<Recorded> result = new AtomicReference<>();
        records.compute(lookupKey, (key, existing) -> {
            long now = System.nanoTime();
            Optional<Decision> recorded = find(decision.key(), now);
            Decision winner = recorded.orElse(decision);
            if (recorded.isEmpty()) {
                decisions.put(decision.key(), new Stored(decision.body().clone(), now + retention.toNanos()));
            }
            boolean absent = existing == null || !existing.live(now);
            boolean complete = absent || existing.heldWith(token, now);
            result.set(new Recorded(winner, recorded.isEmpty(), complete));
            if (!complete) {
                return existing;
            }
            if (existing == null) {
                // Not bounded by max-keys: refusing here would lose a decision the issuer has made.
                size.incrementAndGet();
            }
            return new Entry(identity.fingerprint(), token, winner.key(),
                             decisions.get(winner.key()).expiresAtNanos());
        });
        return result.get();
    }

    @Override
    public boolean release(String lookupKey, long token) {
        AtomicReference<Boolean> released = new AtomicReference<>(false);
        records.computeIfPresent(lookupKey, (key, existing) -> {
            if (!existing.heldWith(token, System.nanoTime())) {
                return existing;
            }
            released.set(true);
            size.decrementAndGet();
            return null;
        });
        return released.get();
    }

    @Override
    public Optional<Decision> findDecision(DecisionKey key) {
        return find(key, System.nanoTime());
    }

    /**
     * Drops every expired record and decision (lapsed leases, responses and decisions past retention).
     *
     * @return how many key records were dropped
     */
    public int sweep() {
        int dropped = 0;
        for (Map.Entry<String, Entry> record : records.entrySet()) {
            if (!record.getValue().live(System.nanoTime()) && records.remove(record.getKey(), record.getValue())) {
                size.decrementAndGet();
                dropped++;
            }
        }
        long now = System.nanoTime();
        decisions.values().removeIf(stored -> stored.expiresAtNanos() - now <= 0);
        return dropped;
    }

    /**
     * Key records currently held, expired ones included until swept.
     *
     * @return count
     */
    public int size() {
        return size.get();
    }

    private Optional<Decision> find(DecisionKey key, long now) {
        Stored stored = decisions.get(key);
        if (stored == null || stored.expiresAtNanos() - now <= 0) {
            return Optional.empty();
        }
        return Optional.of(new Decision(key, stored.body().clone()));
    }

    private static int indexOf(List<Identity> identities, String fingerprint) {
        for (int i = 0; i < identities.size(); i++) {
            if (identities.get(i).fingerprint().equals(fingerprint)) {
                return i;
            }
        }
        return -1;
    }

    // Microseconds of the wall clock, so that tokens keep growing when the process restarts with an empty store;
    // one more than the key's last token when the clock has not moved (or moved back).
    private static long nextToken(Entry previous) {
        Instant now = Instant.now();
        long clock = ChronoUnit.MICROS.between(Instant.EPOCH, now);
        return previous == null ? clock : Math.max(clock, previous.token() + 1);
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
