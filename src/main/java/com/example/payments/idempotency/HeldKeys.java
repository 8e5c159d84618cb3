package com.example.payments.idempotency;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;

/**
 * The table of idempotency keys this process holds, and the accounting the shutdown reads from it: per acquired
 * claim, whether it is still held, lost or decided and its monotonic local lease deadline; how many are held without a
 * decision; how many were released. A key stays in the table until its release succeeded or its decision was
 * recorded, so that the shutdown's key-release phase finds whatever a cut-off request could not release.
 */
final class HeldKeys {

    /** Where a held key stands. */
    enum State { HELD, LOST, DECIDED }

    /**
     * One held key: its state, and its local lease deadline ({@link System#nanoTime()} when the last successful claim
     * or renewal was sent, plus the lease). Written by the registry's flow and by the {@link LeaseRenewer}.
     */
    static final class Hold {
        volatile long leaseDeadlineNanos;
        volatile State state = State.HELD;

        private Hold(long leaseDeadlineNanos) {
            this.leaseDeadlineNanos = leaseDeadlineNanos;
        }
    }

    private final Map<Claim.Acquired, Hold> held = new ConcurrentHashMap<>();
    private final AtomicLong releases = new AtomicLong();
    private final Duration recordBound;

    /**
     * Creates the empty table.
     *
     * @param recordBound longest the store takes to record a decision: a lease must still cover it after the call
     */
    HeldKeys(Duration recordBound) {
        this.recordBound = recordBound;
    }

    /**
     * Starts holding a key just acquired.
     *
     * @param claim              the acquired claim
     * @param leaseDeadlineNanos when the claim was sent ({@link System#nanoTime()}) plus the lease
     */
    void hold(Claim.Acquired claim, long leaseDeadlineNanos) {
        held.put(claim, new Hold(leaseDeadlineNanos));
    }

    /**
     * Whether the key is held, no renewal reported its lease lost, and its local deadline is far enough away to
     * cover the call and the recording after it.
     *
     * @param claim the acquired claim
     * @param call  the longest the call can take
     * @return {@code false} when no work may start on the key
     */
    boolean covers(Claim.Acquired claim, Duration call) {
        Hold hold = held.get(claim);
        return hold != null && hold.state == State.HELD
               && hold.leaseDeadlineNanos - System.nanoTime() > call.plus(recordBound).toNanos();
    }

    /**
     * Marks a key decided, which stops its renewals and its release: a renewal racing the completion would find the
     * record completed and report a lease as lost that was not.
     *
     * @param claim the acquired claim; nothing happens when it is not held
     */
    void decide(Claim.Acquired claim) {
        Hold hold = held.get(claim);
        if (hold != null) {
            hold.state = State.DECIDED;
        }
    }

    /**
     * Marks a key lost before its release, so that no work starts on a key being released.
     *
     * @param claim the acquired claim
     * @return {@code false} when the key is not held or already decided: there is nothing to release
     */
    boolean startRelease(Claim.Acquired claim) {
        Hold hold = held.get(claim);
        if (hold == null || hold.state == State.DECIDED) {
            return false;
        }
        hold.state = State.LOST;
        return true;
    }

    /**
     * Stops holding a key (recorded, released, or no longer this claim's).
     *
     * @param claim the acquired claim
     * @return {@code true} when it was held until this call
     */
    boolean remove(Claim.Acquired claim) {
        return held.remove(claim) != null;
    }

    /** Counts one key released, by any path and for any reason. */
    void countReleased() {
        releases.incrementAndGet();
    }

    /**
     * Keys released since the start, by every path and for every reason.
     *
     * @return count
     */
    long releasedCount() {
        return releases.get();
    }

    /**
     * Keys held without a decision right now.
     *
     * @return count
     */
    int heldCount() {
        return (int) held.values().stream().filter(hold -> hold.state != State.DECIDED).count();
    }

    /**
     * The held keys with their state, for the renewer; a live view, safe to read while it changes.
     *
     * @return claim and hold of each held key
     */
    Set<Map.Entry<Claim.Acquired, Hold>> entries() {
        return held.entrySet();
    }

    /**
     * Releases every held key in parallel, each on a virtual thread of its own, and waits for all of them.
     *
     * @param release releases one key; {@code true} when it did
     * @return how many keys were released
     */
    int releaseAll(Predicate<Claim.Acquired> release) {
        // In parallel, like renewals: one remote call after another could outlast the shutdown's hard deadline when
        // the store answers slowly; together they take about one store timeout.
        AtomicInteger count = new AtomicInteger();
        try (ExecutorService releasing = Executors.newVirtualThreadPerTaskExecutor()) {
            for (Claim.Acquired claim : List.copyOf(held.keySet())) {
                releasing.execute(() -> {
                    if (release.test(claim)) {
                        count.incrementAndGet();
                    }
                });
            }
        }
        return count.get();
    }
}
