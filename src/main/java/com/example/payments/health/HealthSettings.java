package com.example.payments.health;

import java.time.Duration;

import com.example.payments.config.ConfigValues;
import com.example.payments.config.ConfigurationException;

/**
 * Validated {@code health.*} configuration.
 *
 * @param proberInterval   {@code health.prober.interval}, default PT0.5S: how often the loopback prober GETs
 *                         {@code /ping} on the business port; must stay well below the kubelet's periodSeconds
 * @param proberTimeout    {@code health.prober.timeout}, default PT1S: connect + read timeout of one loopback probe
 * @param checkTimeout     {@code health.readiness.check-timeout}, default PT1S: ceiling for each readiness dependency
 *                         check; checks run in parallel, so a readiness answer takes about the slowest one
 * @param breakerThreshold {@code health.circuit-breaker.threshold}, default 60, 0 disables: consecutive failing
 *                         readiness requests after which liveness answers 503 "faulted". Time to trip =
 *                         threshold x kubelet readiness periodSeconds (60 x 5 s = 5 min), not x the prober interval
 * @param progressWindow   {@code health.liveness.progress-window}, default PT90S: liveness fails on the loopback
 *                         prober only when the business listener has also written no response to anyone for this
 *                         long (no progress); a saturated listener that still answers costs readiness only. Must
 *                         exceed one probe (interval + timeout), and {@code server.idle-connection-timeout} +
 *                         {@code idle-connection-period}, so that a flood of idle connections at the connection cap,
 *                         which Helidon closes after that long, reads as saturation, not as a wedge
 */
public record HealthSettings(Duration proberInterval, Duration proberTimeout, Duration checkTimeout,
                             int breakerThreshold, Duration progressWindow) {

    /** Default {@code health.circuit-breaker.threshold}. */
    public static final int DEFAULT_BREAKER_THRESHOLD = 60;

    /**
     * Reads and validates the settings.
     *
     * @param values config reader
     * @return settings
     * @throws ConfigurationException naming the key when a value is unparsable or out of range
     */
    public static HealthSettings create(ConfigValues values) {
        HealthSettings settings = new HealthSettings(
                values.positiveDuration("health.prober.interval", Duration.ofMillis(500)),
                values.positiveDuration("health.prober.timeout", Duration.ofSeconds(1)),
                values.positiveDuration("health.readiness.check-timeout", Duration.ofSeconds(1)),
                (int) values.longInRange("health.circuit-breaker.threshold", DEFAULT_BREAKER_THRESHOLD,
                                         0, Integer.MAX_VALUE),
                values.positiveDuration("health.liveness.progress-window", Duration.ofSeconds(90)));
        Duration oneProbe = settings.proberInterval().plus(settings.proberTimeout());
        if (settings.progressWindow().compareTo(oneProbe) <= 0) {
            throw new ConfigurationException("health.liveness.progress-window", "'" + settings.progressWindow()
                    + "' is not allowed; allowed: a duration > health.prober.interval + health.prober.timeout = "
                    + oneProbe);
        }
        return settings;
    }
}
