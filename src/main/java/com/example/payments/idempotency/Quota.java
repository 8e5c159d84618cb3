package com.example.payments.idempotency;

/**
 * Per-merchant bounds on idempotency records, checked by the store only when a claim would take a key
 * anew: replays, recoveries, in-flight and mismatch answers are never refused, and a decision is always recorded.
 * The counts are the store's: per replica in memory, global on a shared store (Redis, PostgreSQL), so that one
 * merchant cannot fill the store for everyone.
 *
 * @param maxInFlight {@code idempotency.merchant-quota.max-in-flight}: IN_FLIGHT records of one merchant at most
 *                    (requests running at once, on every replica sharing the store)
 * @param maxRecords  {@code idempotency.merchant-quota.max-records}: records of one merchant at most, in flight or
 *                    completed, until each expires ({@code idempotency.retention} after its decision)
 */
public record Quota(int maxInFlight, int maxRecords) {

    /** No bound: for tests and callers that bound elsewhere. */
    public static final Quota UNLIMITED = new Quota(Integer.MAX_VALUE, Integer.MAX_VALUE);

    /**
     * Creates a quota.
     *
     * @throws IllegalArgumentException unless {@code 1 <= maxInFlight <= maxRecords}
     */
    public Quota {
        if (maxInFlight < 1 || maxRecords < maxInFlight) {
            throw new IllegalArgumentException("quota needs 1 <= maxInFlight <= maxRecords, got " + maxInFlight
                                               + " and " + maxRecords);
        }
    }

    /** The bound a claim ran into. */
    public enum Limit {
        /** {@link #maxInFlight()}: 429 with {@code Retry-After: 1}, a running request ends within seconds. */
        IN_FLIGHT,
        /** {@link #maxRecords()}: 429 with a longer {@code Retry-After}: records free up as they expire. */
        RECORDS
    }
}
