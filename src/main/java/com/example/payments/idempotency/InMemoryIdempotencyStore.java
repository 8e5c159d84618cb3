package com.example.payments.idempotency;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;

/**
 * {@link IdempotencyStore} in this process's memory: correct for a single replica only (a retry routed to another
 * replica would not see the record). Bounded by {@code idempotency.max-keys} (default 100000): when full, new keys are
 * refused ({@link Claim.Full}) rather than evicting a record before its retention ends, because evicting one would let
 * a retry authorize twice. Expired records and decisions are dropped by {@link #sweep()} (called by the retention
 * sweeper) and treated as absent by every operation in the meantime.
 *
 * <p>What it does: the store contract on the map of key records and the map of decisions. Every operation on a key,
 * decisions included, runs inside one {@link ConcurrentHashMap#compute} of that key, so a claim and a recording of the
 * same key never interleave. Each change of a record also updates the counts of its merchant ({@link Quota}) and of
 * the whole store in the same step ({@link InMemoryCounts}), and queues its expiry ({@link InMemoryExpiries}): the
 * sweep costs what expires, not what is held, and the record, not the queue, decides what is expired.
 */
public final class InMemoryIdempotencyStore implements IdempotencyStore {

    private record Stored(byte[] body, long expiresAtNanos) {
    }

    private final Map<String, KeyRecord> records = new ConcurrentHashMap<>();
    private final Map<DecisionKey, Stored> decisions = new ConcurrentHashMap<>();
    private final InMemoryExpiries expiries = new InMemoryExpiries();
    private final InMemoryCounts counts;

    private InMemoryIdempotencyStore(int maxKeys) {
        this.counts = new InMemoryCounts(maxKeys);
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
    public Claim claim(String lookupKey, List<Identity> identities, Duration lease, Quota quota) {
        String scope = RequestIdentities.scopeOf(lookupKey);
        AtomicReference<Claim> result = new AtomicReference<>();
        records.compute(lookupKey, (key, existing) -> {
            long now = System.nanoTime();
            KeyRecord current = existing != null && existing.live(now) ? existing : null;
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
                    long token = existing == null ? 0 : existing.token();
                    return expiring(key, counts.account(scope, existing, new KeyRecord(identities.get(i).fingerprint(),
                            token, decision.get().key(), decisions.get(decision.get().key()).expiresAtNanos())));
                }
            }
            if (current != null && current.decision() == null) {
                result.set(new Claim.InFlight());
                return existing;
            }
            Optional<Quota.Limit> over = counts.reserve(scope, existing, quota);
            if (over.isPresent()) {
                result.set(new Claim.OverQuota(over.get()));
                return existing;
            }
            if (existing == null && !counts.reserveKey()) {
                counts.unreserve(scope, 1, 1);
                result.set(new Claim.Full());
                return null;
            }
            int identity = Math.max(matched, 0);
            long token = KeyRecord.nextToken(existing);
            result.set(new Claim.Acquired(lookupKey, token, identity));
            return expiring(key, new KeyRecord(identities.get(identity).fingerprint(), token, null,
                                               now + lease.toNanos()));
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
            return expiring(key, new KeyRecord(existing.fingerprint(), token, null, now + lease.toNanos()));
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
            Stored stored = null;
            if (recorded.isEmpty()) {
                stored = new Stored(decision.body().clone(), now + retention.toNanos());
                decisions.put(decision.key(), stored);
            }
            boolean absent = existing == null || !existing.live(now);
            boolean complete = absent || existing.heldWith(token, now);
            result.set(new Recorded(winner, recorded.isEmpty(), complete));
            if (!complete) {
                if (stored != null) {
                    expiries.add(stored.expiresAtNanos(), null, decision.key());
                }
                return existing;
            }
            // Bounded neither by max-keys nor by a quota: refusing here would lose a decision the issuer has made.
            KeyRecord completed = counts.account(RequestIdentities.scopeOf(lookupKey), existing, new KeyRecord(
                    identity.fingerprint(), token, winner.key(), decisions.get(winner.key()).expiresAtNanos()));
            // A new decision and its key expire together: one queued expiry for both.
            expiries.add(completed.expiresAtNanos(), key, stored != null ? decision.key() : null);
            return completed;
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
            return counts.account(RequestIdentities.scopeOf(lookupKey), existing, null);
        });
        return released.get();
    }

    @Override
    public Optional<Decision> findDecision(DecisionKey key) {
        return find(key, System.nanoTime());
    }

    /**
     * Never blocks: every call works on this process's memory.
     *
     * @return {@code false}: calls run on the request's own thread
     */
    @Override
    public boolean blocks() {
        return false;
    }

    /**
     * Drops every expired record and decision (lapsed leases, responses and decisions past retention). Costs what
     * came due since the last sweep, not what the store holds.
     *
     * @return how many key records were dropped
     */
    public int sweep() {
        return expiries.sweep(System.nanoTime(), this::dropIfExpired, decision -> decisions.computeIfPresent(
                decision, (key, stored) -> stored.expiresAtNanos() - System.nanoTime() <= 0 ? null : stored));
    }

    private boolean dropIfExpired(String lookupKey) {
        boolean[] swept = new boolean[1];
        records.computeIfPresent(lookupKey, (key, existing) -> {
            if (existing.live(System.nanoTime())) {
                // Renewed, completed or claimed again since this expiry was queued: its newer expiry is queued too.
                return existing;
            }
            swept[0] = true;
            return counts.account(RequestIdentities.scopeOf(lookupKey), existing, null);
        });
        return swept[0];
    }

    // Queues the expiry of a record that is being stored; returns it for compute.
    private KeyRecord expiring(String lookupKey, KeyRecord entry) {
        expiries.add(entry.expiresAtNanos(), lookupKey, null);
        return entry;
    }

    /**
     * Key records currently held, expired ones included until swept.
     *
     * @return count
     */
    public int size() {
        return counts.size();
    }

    /**
     * Why the store is full, for readiness: it refuses new keys until records expire, and a restart would drop the
     * records it holds (so it must not feed the circuit breaker).
     *
     * @return e.g. {@code full: 100000 of 100000 keys held (idempotency.max-keys)}, or empty while there is room
     */
    public Optional<String> full() {
        return counts.full();
    }

    /**
     * A merchant's records, as counted for its quota: expired ones included until swept.
     *
     * @param scope the merchant
     * @return records in flight and in total, e.g. {@code [2, 10]}
     */
    int[] usage(String scope) {
        return counts.usage(scope);
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
}
