package com.example.payments.issuer;

import java.time.Duration;

import com.example.payments.config.ConfigValues;

/**
 * Validated settings of a {@link SimulatedIssuer}, read under one prefix: {@code authorizer} for the built-in
 * {@code rule-based} authorizer, {@code issuer} for the issuer simulator of the tests
 * and load tests ({@code IssuerSimulator}, test scope).
 *
 * @param defaultLimit     {@code <prefix>.default-limit}, default 1000000 (minor units): amounts above it decline
 *                         with {@code limit_exceeded}
 * @param latency          {@code <prefix>.simulated-latency}, default PT0S: time each call waits before it is
 *                         answered, to hold requests in flight in tests and load tests
 * @param jitter           {@code <prefix>.simulated-latency-jitter}, default PT0S: uniform random extra latency
 * @param ledgerRetention  {@code <prefix>.ledger-retention}, default P8D: how long an attempt id is remembered (and
 *                         answered from the ledger), and an approved authorization can be captured or voided at the
 *                         issuer; at least the services' {@code authorization.validity} (default P7D; the in-process
 *                         authorizer refuses less at startup), with a day for the expiry's void and late retries
 * @param ledgerMaxEntries {@code <prefix>.ledger-max-entries}, default 100000: attempt ids remembered at most; beyond,
 *                         the oldest is forgotten before its retention ends (counted as an eviction)
 */
public record IssuerSettings(long defaultLimit, Duration latency, Duration jitter, Duration ledgerRetention,
                             int ledgerMaxEntries) {

    /** {@code ledger-retention}'s default: {@code authorization.validity}'s default (P7D) and a day. */
    public static final Duration DEFAULT_LEDGER_RETENTION = Duration.ofDays(8);

    /**
     * Reads and validates the settings.
     *
     * @param values config reader
     * @param prefix {@code authorizer} or {@code issuer}
     * @return settings
     * @throws com.example.payments.config.ConfigurationException naming the key when a value is out of range
     */
    public static IssuerSettings create(ConfigValues values, String prefix) {
        return new IssuerSettings(
                values.longInRange(prefix + ".default-limit", 1_000_000, 1, Long.MAX_VALUE),
                values.nonNegativeDuration(prefix + ".simulated-latency", Duration.ZERO),
                values.nonNegativeDuration(prefix + ".simulated-latency-jitter", Duration.ZERO),
                values.positiveDuration(prefix + ".ledger-retention", DEFAULT_LEDGER_RETENTION),
                (int) values.longInRange(prefix + ".ledger-max-entries", 100_000, 1, Integer.MAX_VALUE));
    }
}
