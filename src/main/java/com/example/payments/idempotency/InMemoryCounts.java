package com.example.payments.idempotency;

import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The in-memory store's record counts: per merchant (records in flight, records of any state) for its {@link Quota},
 * and for the whole store, bounded by {@code idempotency.max-keys}. The store calls these inside the compute of the
 * key that changes, so a key record and its counts change in one step; an expired record is counted until it is
 * swept or taken over.
 */
final class InMemoryCounts {

    /** One merchant's counts: records in flight, and records of any state. */
    private record Usage(int inFlight, int records) {

        Usage plus(int inFlightDelta, int recordsDelta) {
            return new Usage(inFlight + inFlightDelta, records + recordsDelta);
        }
    }

    private final Map<String, Usage> usage = new ConcurrentHashMap<>();
    private final AtomicInteger size = new AtomicInteger();
    private final int maxKeys;

    /**
     * Creates the counts, all zero.
     *
     * @param maxKeys {@code idempotency.max-keys}: most key records held at once
     */
    InMemoryCounts(int maxKeys) {
        this.maxKeys = maxKeys;
    }

    /**
     * Counts a new claim in its merchant's usage if its quota allows: adds the in-flight record, and the record itself
     * unless an expired one of the key is still counted. Runs inside the key's compute, so the record cannot change
     * meanwhile; usage.compute makes check and update one step for the merchant.
     *
     * @param scope    the merchant
     * @param existing the key's record, expired or not, or {@code null}
     * @param quota    the merchant's bounds
     * @return the bound the claim would exceed (nothing counted), or empty when counted
     */
    Optional<Quota.Limit> reserve(String scope, KeyRecord existing, Quota quota) {
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

    /**
     * Takes back what {@link #reserve} counted, for a claim refused after all (the store is full).
     *
     * @param scope        the merchant
     * @param inFlight     in-flight records to take back
     * @param recordsDelta records to take back
     */
    void unreserve(String scope, int inFlight, int recordsDelta) {
        usage.computeIfPresent(scope, (s, counted) -> nonZero(counted.plus(-inFlight, -recordsDelta)));
    }

    /**
     * The counts follow a key record from {@code before} to {@code after} (either may be {@code null}). Claims that
     * acquire count themselves beforehand ({@link #reserve}), so that a refused one changes nothing.
     *
     * @param scope  the merchant
     * @param before the record before the change
     * @param after  the record after it
     * @return {@code after}, for compute
     */
    KeyRecord account(String scope, KeyRecord before, KeyRecord after) {
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

    /**
     * Counts one more key record in the store if {@code idempotency.max-keys} allows it.
     *
     * @return {@code false} when the store is full (nothing counted)
     */
    boolean reserveKey() {
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

    /**
     * Key records currently held, expired ones included until swept.
     *
     * @return count
     */
    int size() {
        return size.get();
    }

    /**
     * Why the store is full.
     *
     * @return e.g. {@code full: 100000 of 100000 keys held (idempotency.max-keys)}, or empty while there is room
     */
    Optional<String> full() {
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
}
