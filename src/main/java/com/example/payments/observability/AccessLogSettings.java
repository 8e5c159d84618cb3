package com.example.payments.observability;

import com.example.payments.config.ConfigValues;

/**
 * {@code access-log.*}: the business listener's access log (docs/observability.md#access-log).
 *
 * @param enabled     {@code access-log.enabled}, default {@code true}: one line per business request
 * @param sampleRatio {@code access-log.sample-ratio}, default {@code 1.0}: the share of requests logged, from
 *                    {@code 0.0} to {@code 1.0}, chosen by request id (so the same requests as a trace sampler with
 *                    the same ratio); answers with a 5xx status are always logged
 */
public record AccessLogSettings(boolean enabled, double sampleRatio) {

    /**
     * Reads and validates the keys.
     *
     * @param values the configuration
     * @return settings
     * @throws com.example.payments.config.ConfigurationException naming a key that is wrong
     */
    public static AccessLogSettings create(ConfigValues values) {
        boolean enabled = values.oneOf("access-log.enabled", Toggle.class, Toggle.TRUE) == Toggle.TRUE;
        return new AccessLogSettings(enabled, values.ratio("access-log.sample-ratio", 1.0));
    }

    private enum Toggle { TRUE, FALSE }
}
