package com.example.payments.deploy;

import java.time.Duration;

/**
 * The documented bounds that the probe settings of every environment must meet (docs/deploying.md).
 */
final class ProbeBudgets {

    /**
     * Longest boot the startup probe must tolerate: 60 s. Measured boot to {@code /health/startup} 200 is 1.5-5 s on
     * two busy cores; a pod throttled to a fraction of a core while the JIT warms up is the slow case.
     */
    static final Duration BOOT_BUDGET = Duration.ofSeconds(60);

    /**
     * The boot without its warm-up, at most: 15 s (JVM start, migrations and the pool's connections on a throttled
     * CPU). The warm-up ({@code warm-up.timeout}, which startup waits for) gets the rest of {@link #BOOT_BUDGET}.
     */
    static final Duration BOOT_WITHOUT_WARM_UP = Duration.ofSeconds(15);

    /**
     * Longest time a failing pod may keep receiving new requests: 6 s (periodSeconds x failureThreshold +
     * timeoutSeconds). 15 s is too slow for a service doing thousands of authorizations a second.
     */
    static final Duration READINESS_DETECTION_BOUND = Duration.ofSeconds(6);

    /**
     * Longest Redis failover assumed: 60 s (Sentinel's default down-after-milliseconds of 30 s, plus election,
     * promotion and client reconnects, rounded up; managed Redis services quote failovers in the same range - measure
     * yours). During one, every replica fails readiness at once; a circuit breaker that trips sooner restarts the
     * whole fleet just as Redis comes back.
     */
    static final Duration REDIS_FAILOVER = Duration.ofSeconds(60);

    private ProbeBudgets() {
    }
}
