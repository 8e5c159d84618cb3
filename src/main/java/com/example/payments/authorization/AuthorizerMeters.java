package com.example.payments.authorization;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import com.example.payments.observability.LatencyBuckets;

import io.helidon.metrics.api.Counter;
import io.helidon.metrics.api.MeterRegistry;
import io.helidon.metrics.api.Tag;
import io.helidon.metrics.api.Timer;

/**
 * The authorizer's calls on {@code /metrics}: {@code authorizer_invocations_total{operation,outcome}} and their
 * duration, {@code authorizer_duration_seconds{operation,outcome}} (a histogram in seconds, the HTTP requests'
 * latency buckets), for the operations {@code authorize}, {@code capture}, {@code void} and {@code reverse} and the
 * outcomes {@code approved}, {@code declined} and {@code unknown}. Every series is registered at creation, so each
 * one reads 0 before its first call (an alert on an increase sees the first one).
 */
final class AuthorizerMeters {

    private static final List<String> OPERATIONS = List.of("authorize", "capture", "void", "reverse");
    private static final List<String> OUTCOMES = List.of("approved", "declined", "unknown");

    private final MeterRegistry registry;
    private final Map<String, Series> series = new ConcurrentHashMap<>();

    private AuthorizerMeters(MeterRegistry registry) {
        this.registry = registry;
    }

    /**
     * Registers every series in the registry (an authorizer created again on the same registry shares them).
     *
     * @param registry the service's meter registry
     * @return the meters
     */
    static AuthorizerMeters create(MeterRegistry registry) {
        AuthorizerMeters meters = new AuthorizerMeters(registry);
        for (String operation : OPERATIONS) {
            for (String outcome : OUTCOMES) {
                meters.series(operation, outcome);
            }
        }
        return meters;
    }

    /**
     * Counts one call and records its duration.
     *
     * @param operation  {@code authorize}, {@code capture}, {@code void} or {@code reverse}
     * @param outcome    {@code approved}, {@code declined} or {@code unknown}
     * @param startNanos {@link System#nanoTime()} when the call started
     */
    void record(String operation, String outcome, long startNanos) {
        series(operation, outcome).record(startNanos);
    }

    private Series series(String operation, String outcome) {
        return series.computeIfAbsent(operation + " " + outcome, k -> Series.create(registry, operation, outcome));
    }

    /** The counter and the duration histogram of one operation and outcome. */
    private record Series(Counter invocations, Timer duration) {

        static Series create(MeterRegistry meters, String operation, String outcome) {
            List<Tag> tags = List.of(Tag.create("operation", operation), Tag.create("outcome", outcome));
            return new Series(
                    meters.getOrCreate(Counter.builder("authorizer_invocations")
                                               .tags(tags)
                                               .description("Calls to the authorizer; a replay never adds one")),
                    meters.getOrCreate(Timer.builder("authorizer_duration")
                                               .baseUnit(TimeUnit.SECONDS)
                                               .tags(tags)
                                               .description("Duration of each authorizer call, up to its timeout")
                                               .percentiles(new double[0])
                                               .buckets(LatencyBuckets.bounds())));
        }

        void record(long startNanos) {
            invocations.increment();
            duration.record(Duration.ofNanos(System.nanoTime() - startNanos));
        }
    }
}
