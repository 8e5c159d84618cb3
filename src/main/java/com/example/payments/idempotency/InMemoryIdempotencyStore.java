package com.example.payments.idempotency;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.PriorityBlockingQueue;
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
 * a claim and a recording of the same key never interleave. Each change of a record also updates the counts of its
 * merchant ({@link Quota}) and of the whole store in the same step; an expired record is counted until it is swept or
 * taken over.
 *
 * <p>The sweep costs what expires, not what is held: every time a record or decision gets an expiry, its key is
 * queued in expiry order ({@link PriorityBlockingQueue}, O(log n) per expiry set), and {@link #sweep()} takes only
 * the queue's due head. A queued expiry that a later one replaced (a renewed lease, a completed or re-claimed key) is
 * dropped when it comes due, after the record itself is checked: the record, not the queue, decides what is expired.
 *
 * <p>Size: the whole store contract (claims, quotas, decisions, sweep) works on one map, one compute per key.
 */
public final class InMemoryIdempotencyStore implements IdempotencyStore {

    /**
     * One key record: IN_FLIGHT while {@code decision == null}. {@code expiresAtNanos} is the lease, or once completed
     * the decision's retention. An expired entry counts as absent; it stays until swept so that the next claim's token
     * keeps growing.
     */
    private record Entry(String fingerprint, long token, DecisionKey decision, long expiresAtNanos) {

        boolean inFlight() {
            return decision == null;
        }

        boolean live(long now) {
            return expiresAtNanos - now > 0;
        }

        boolean heldWith(long candidate, long now) {
            return decision == null && token == candidate && live(now);
        }
    }

    private record Stored(byte[] body, long expiresAtNanos) {
    }

    /** When a key record ({@code lookupKey}), a decision ({@code decision}) or both may have expired; null: not. */
    private record Due(long atNanos, String lookupKey, DecisionKey decision) {

        // System.nanoTime() order: by difference, which stays right when the clock's values wrap around.
        static int compare(Due a, Due b) {
            return Long.signum(a.atNanos - b.atNanos);
        }
    }

    /** One merchant's counts: records in flight, and records of any state. */
    private record Usage(int inFlight, int records) {

        Usage plus(int inFlightDelta, int recordsDelta) {
            return new Usage(inFlight + inFlightDelta, records + recordsDelta);
        }
    }

    private final Map<String, Entry> records = new ConcurrentHashMap<>();
    private final Map<DecisionKey, Stored> decisions = new ConcurrentHashMap<>();
    private final Map<String, Usage> usage = new ConcurrentHashMap<>();
    private final PriorityBlockingQueue<Due> expiries = new PriorityBlockingQueue<>(64, Due::compare);
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
    public Claim claim(String lookupKey, List<Identity> identities, Duration lease, Quota quota) {
        String scope = RequestIdentities.scopeOf(lookupKey);
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
                    long token = existing == null ? 0 : existing.token();
                    return expiring(key, account(scope, existing, new Entry(identities.get(i).fingerprint(), token,
                            decision.get().key(), decisions.get(decision.get().key()).expiresAtNanos())));
                }
            }
            if (current != null && current.decision() == null) {
                result.set(new Claim.InFlight());
                return existing;
            }
            Optional<Quota.Limit> over = reserve(scope, existing, quota);
            if (over.isPresent()) {
                result.set(new Claim.OverQuota(over.get()));
                return existing;
            }
            if (existing == null && !reserveKey()) {
                unreserve(scope, 1, 1);
                result.set(new Claim.Full());
                return null;
            }
            int identity = Math.max(matched, 0);
            long token = nextToken(existing);
            result.set(new Claim.Acquired(lookupKey, token, identity));
            return expiring(key, new Entry(identities.get(identity).fingerprint(), token, null, now + lease.toNanos()));
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
            return expiring(key, new Entry(existing.fingerprint(), token, null, now + lease.toNanos()));
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
                    expiries.add(new Due(stored.expiresAtNanos(), null, decision.key()));
                }
                return existing;
            }
            // Bounded neither by max-keys nor by a quota: refusing here would lose a decision the issuer has made.
            Entry completed = account(RequestIdentities.scopeOf(lookupKey), existing, new Entry(
                    identity.fingerprint(), token, winner.key(), decisions.get(winner.key()).expiresAtNanos()));
            // A new decision and its key expire together: one queued expiry for both.
            expiries.add(new Due(completed.expiresAtNanos(), key, stored != null ? decision.key() : null));
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
            return account(RequestIdentities.scopeOf(lookupKey), existing, null);
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
        int dropped = 0;
        long now = System.nanoTime();
        for (Due due = expiries.peek(); due != null && due.atNanos() - now <= 0; due = expiries.peek()) {
            // Only the sweeper takes from the queue: what poll() returns is this head, or one inserted meanwhile
            // before it, which is due as well.
            due = expiries.poll();
            if (due.lookupKey() != null) {
                dropped += dropIfExpired(due.lookupKey()) ? 1 : 0;
            }
            if (due.decision() != null) {
                decisions.computeIfPresent(due.decision(),
                                           (key, stored) -> stored.expiresAtNanos() - System.nanoTime() <= 0
                                                   ? null : stored);
            }
        }
        return dropped;
    }

    private boolean dropIfExpired(String lookupKey) {
        boolean[] swept = new boolean[1];
        records.computeIfPresent(lookupKey, (key, existing) -> {
            if (existing.live(System.nanoTime())) {
                // Renewed, completed or claimed again since this expiry was queued: its newer expiry is queued too.
                return existing;
            }
            swept[0] = true;
            return account(RequestIdentities.scopeOf(lookupKey), existing, null);
        });
        return swept[0];
    }

    // Queues the expiry of a record that is being stored; returns it for compute.
    private Entry expiring(String lookupKey, Entry entry) {
        expiries.add(new Due(entry.expiresAtNanos(), lookupKey, null));
        return entry;
    }

    /**
     * Key records currently held, expired ones included until swept.
     *
     * @return count
     */
    public int size() {
        return size.get();
    }

    /**
     * Why the store is full, for readiness: it refuses new keys until records expire, and a restart would drop the
     * records it holds (so it must not feed the circuit breaker).
     *
     * @return e.g. {@code full: 100000 of 100000 keys held (idempotency.max-keys)}, or empty while there is room
     */
    public Optional<String> full() {
        int held = size.get();
        return held >= maxKeys ? Optional.of("full: " + held + " of " + maxKeys + " keys held (idempotency.max-keys)")
                : Optional.empty();
    }

    /**
     * A merchant's records, as counted for its quota: expired ones included until swept.
     *
     * @param scope the merchant
     * @return records in flight and in total, e.g. {@code [2, 10]}
     */
    int[] usage(String scope) {
        Usage counted = usage.getOrDefault(scope, new Usage(0, 0));
        return new int[] {counted.inFlight(), counted.records()};
    }

    // Counts a new claim in its merchant's usage if its quota allows: adds the in-flight record, and the record itself
    // unless an expired one of the key is still counted. Runs inside the key's compute, so the record cannot change
    // meanwhile; usage.compute makes check and update one step for the merchant.
    private Optional<Quota.Limit> reserve(String scope, Entry existing, Quota quota) {
        int inFlight = existing != null && existing.inFlight() ? 0 : 1;
        int recordsDelta = existing == null ? 1 : 0;
        Quota.Limit[] over = new Quota.Limit[1];
        usage.compute(scope, (s, counted) -> {
            Usage current = counted == null ? new Usage(0, 0) : counted;
            if (current.inFlight() + inFlight > quota.maxInFlight()) {
                over[0] = Quota.Limit.IN_FLIGHT;
            } else if (current.records() + recordsDelta > quota.maxRecords()) {
                over[0] = Quota.Limit.RECORDS;
            }
            return over[0] != null ? counted : nonZero(current.plus(inFlight, recordsDelta));
        });
        return Optional.ofNullable(over[0]);
    }

    private void unreserve(String scope, int inFlight, int recordsDelta) {
        usage.computeIfPresent(scope, (s, counted) -> nonZero(counted.plus(-inFlight, -recordsDelta)));
    }

    // The counts follow a key record from `before` to `after` (either may be null); returns `after` for compute.
    // Claims that acquire count themselves beforehand (reserve), so that a refused one changes nothing.
    private Entry account(String scope, Entry before, Entry after) {
        int inFlight = (after != null && after.inFlight() ? 1 : 0) - (before != null && before.inFlight() ? 1 : 0);
        int present = (after != null ? 1 : 0) - (before != null ? 1 : 0);
        if (inFlight != 0 || present != 0) {
            usage.compute(scope, (s, counted) -> nonZero((counted == null ? new Usage(0, 0) : counted)
                    .plus(inFlight, present)));
        }
        size.addAndGet(present);
        return after;
    }

    private static Usage nonZero(Usage counted) {
        return counted.inFlight() == 0 && counted.records() == 0 ? null : counted;
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

    private boolean reserveKey() {
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
