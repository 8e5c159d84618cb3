package com.example.payments.authorization;

import java.time.Duration;

import com.example.payments.config.ConfigValues;

/**
 * Validated {@code authorizer.*} configuration.
 *
 * @param timeout           {@code authorizer.timeout}, default PT5S: longest wait for the issuer; a request that
 *                          exceeds it answers 504 and releases its idempotency key. Must be shorter than
 *                          {@code shutdown.drain-timeout} so that no request outlives the drain
 * @param defaultLimit      {@code authorizer.default-limit}, default 1000000 (minor units): amounts above it decline
 *                          with {@code limit_exceeded}
 * @param simulatedLatency  {@code authorizer.simulated-latency}, default PT0S: time the built-in authorizer waits
 *                          before answering, to hold requests in flight in tests and load tests
 * @param simulatedJitter   {@code authorizer.simulated-latency-jitter}, default PT0S: uniform random extra latency
 */
public record AuthorizerSettings(Duration timeout, long defaultLimit, Duration simulatedLatency,
                                 Duration simulatedJitter) {

    /**
     * Reads and validates the settings.
     *
     * @param values config reader
     * @return settings
     * @throws com.example.payments.config.ConfigurationException naming the key when a value is out of range
     */
    public static AuthorizerSettings create(ConfigValues values) {
        return new AuthorizerSettings(
                values.positiveDuration("authorizer.timeout", Duration.ofSeconds(5)),
                values.longInRange("authorizer.default-limit", 1_000_000, 1, Long.MAX_VALUE),
                values.nonNegativeDuration("authorizer.simulated-latency", Duration.ZERO),
                values.nonNegativeDuration("authorizer.simulated-latency-jitter", Duration.ZERO));
    }
}
