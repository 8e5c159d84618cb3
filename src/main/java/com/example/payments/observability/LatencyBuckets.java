package com.example.payments.observability;

import java.time.Duration;

/**
 * The histogram buckets every latency timer shares (business requests, authorizer calls, database statements), so
 * that a dashboard can put them side by side: 5, 10, 25, 50, 100, 250 and 500 ms, 1, 2.5, 5 and 10 s.
 */
public final class LatencyBuckets {

    private static final Duration[] BUCKETS = {
            Duration.ofMillis(5), Duration.ofMillis(10), Duration.ofMillis(25), Duration.ofMillis(50),
            Duration.ofMillis(100), Duration.ofMillis(250), Duration.ofMillis(500), Duration.ofSeconds(1),
            Duration.ofMillis(2500), Duration.ofSeconds(5), Duration.ofSeconds(10)};

    private LatencyBuckets() {
    }

    /**
     * The bucket bounds, 5 ms to 10 s.
     *
     * @return a copy of the bucket bounds, in ascending order
     */
    public static Duration[] bounds() {
        return BUCKETS.clone();
    }
}
