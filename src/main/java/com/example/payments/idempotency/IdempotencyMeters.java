package com.example.payments.idempotency;

import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import com.example.payments.idempotency.IdempotencyRegistry.ReleaseReason;

import io.helidon.metrics.api.Counter;
import io.helidon.metrics.api.MeterRegistry;
import io.helidon.metrics.api.Tag;

/**
 * The registry's counters: {@code idempotency_requests_total{outcome}}, {@code idempotency_quota_total{outcome}}
 * ({@code allowed}, {@code in_flight_exceeded}, {@code records_exceeded}, registered at creation) and
 * {@code idempotency_keys_released_total{reason}} (one series per {@link ReleaseReason}, registered at creation).
 */
final class IdempotencyMeters {

    private final MeterRegistry meters;
    private final Map<ReleaseReason, Counter> released = new EnumMap<>(ReleaseReason.class);
    // Counters by outcome, created at first use and held: a registry lookup per request builds a meter id each time.
    private final Map<String, Counter> requestCounters = new ConcurrentHashMap<>();
    private final Map<String, Counter> quotaCounters = new ConcurrentHashMap<>();

    /**
     * Creates the counters and registers the quota and release series.
     *
     * @param meters where the counters go
     */
    IdempotencyMeters(MeterRegistry meters) {
        this.meters = meters;
        for (String outcome : List.of("allowed", "in_flight_exceeded", "records_exceeded")) {
            quotaCounter(outcome);
        }
        for (ReleaseReason reason : ReleaseReason.values()) {
            released.put(reason, meters.getOrCreate(Counter.builder("idempotency_keys_released")
                    .tags(List.of(Tag.create("reason", reason.name().toLowerCase(Locale.ROOT))))
                    .description("IN_FLIGHT idempotency keys released so that a retry can run")));
        }
    }

    /**
     * Counts a request by its idempotency outcome.
     *
     * @param outcome the {@code outcome} tag of {@code idempotency_requests_total}, e.g. {@code new}, {@code replayed}
     */
    void count(String outcome) {
        requestCounters.computeIfAbsent(outcome, o -> meters.getOrCreate(
                Counter.builder("idempotency_requests")
                        .tags(List.of(Tag.create("outcome", o)))
                        .description("Requests by idempotency outcome"))).increment();
    }

    /**
     * Counts a claim: by its idempotency outcome, and, when it took a key anew or the merchant's quota refused it, by
     * its quota outcome.
     *
     * @param claim what the store answered
     * @return the {@code outcome} tag it was counted under: {@code new}, {@code recovered}, {@code replayed},
     *         {@code in_flight}, {@code mismatch}, {@code rejected_full} or {@code rejected_quota}
     */
    String claimed(Claim claim) {
        String outcome = switch (claim) {
        case Claim.Acquired acquired -> {
            quota("allowed");
            yield "new";
        }
        case Claim.Replay replay -> replay.recovered() ? "recovered" : "replayed";
        case Claim.InFlight inFlight -> "in_flight";
        case Claim.Mismatch mismatch -> "mismatch";
        case Claim.Full full -> "rejected_full";
        case Claim.OverQuota over -> {
            quota(over.limit() == Quota.Limit.IN_FLIGHT ? "in_flight_exceeded" : "records_exceeded");
            yield "rejected_quota";
        }
        };
        count(outcome);
        return outcome;
    }

    /**
     * Counts a new claim by its merchant-quota outcome.
     *
     * @param outcome the {@code outcome} tag of {@code idempotency_quota_total}: {@code allowed},
     *                {@code in_flight_exceeded} or {@code records_exceeded}
     */
    void quota(String outcome) {
        quotaCounter(outcome).increment();
    }

    /**
     * Counts a released key.
     *
     * @param reason the {@code reason} tag of {@code idempotency_keys_released_total}
     */
    void released(ReleaseReason reason) {
        released.get(reason).increment();
    }

    private Counter quotaCounter(String outcome) {
        return quotaCounters.computeIfAbsent(outcome, o -> meters.getOrCreate(
                Counter.builder("idempotency_quota")
                        .tags(List.of(Tag.create("outcome", o)))
                        .description("New idempotency claims by merchant-quota outcome")));
    }
}
