package com.example.payments.lifecycle;

import java.time.Duration;

import com.example.payments.config.ConfigValues;
import com.example.payments.config.ConfigurationException;

/**
 * Validated {@code shutdown.*} configuration. Every duration bounds a phase that starts at SIGTERM or later; each
 * deadline is created when its phase begins, never at startup.
 *
 * @param preDrainDelay {@code shutdown.pre-drain-delay}, default PT0S (prod: PT5S): readiness is already 503 and the
 *                      business port keeps serving, closing each connection after its response, while load
 *                      balancers de-register the pod
 * @param drainTimeout  {@code shutdown.drain-timeout}, default PT10S: longest wait for in-flight requests after the
 *                      listener stops accepting; also the business server's {@code shutdown-grace-period}
 * @param cleanupTimeout {@code shutdown.cleanup-timeout}, default PT3S: bound on stopping workers and closing clients
 * @param metricsLinger {@code shutdown.metrics-linger}, default PT0S (prod: PT6S, one scrape interval and a margin):
 *                      the health listener stays up so one more scrape sees the shutdown histogram
 * @param hardDeadline  {@code shutdown.hard-deadline}, default PT30S: from the signal, after which the process halts
 *                      with exit status 1 naming the hung phase; must exceed the sum of the four phases
 */
public record ShutdownSettings(Duration preDrainDelay, Duration drainTimeout, Duration cleanupTimeout,
                               Duration metricsLinger, Duration hardDeadline) {

    /**
     * Reads and validates the settings.
     *
     * @param values config reader
     * @return settings
     * @throws ConfigurationException naming the key when a value is out of range, or when the hard deadline does not
     *                                exceed the phases it bounds
     */
    public static ShutdownSettings create(ConfigValues values) {
        ShutdownSettings settings = new ShutdownSettings(
                values.nonNegativeDuration("shutdown.pre-drain-delay", Duration.ZERO),
                values.positiveDuration("shutdown.drain-timeout", Duration.ofSeconds(10)),
                values.positiveDuration("shutdown.cleanup-timeout", Duration.ofSeconds(3)),
                values.nonNegativeDuration("shutdown.metrics-linger", Duration.ZERO),
                values.positiveDuration("shutdown.hard-deadline", Duration.ofSeconds(30)));
        Duration phases = settings.phasesTotal();
        if (settings.hardDeadline().compareTo(phases) <= 0) {
            throw new ConfigurationException("shutdown.hard-deadline", "'" + settings.hardDeadline()
                    + "' is not allowed; allowed: a duration > pre-drain-delay + drain-timeout + cleanup-timeout + "
                    + "metrics-linger = " + phases);
        }
        return settings;
    }

    /**
     * The longest a graceful shutdown can take before the health listener closes.
     *
     * @return pre-drain delay + drain timeout + cleanup timeout + metrics linger
     */
    public Duration phasesTotal() {
        return preDrainDelay.plus(drainTimeout).plus(cleanupTimeout).plus(metricsLinger);
    }
}
