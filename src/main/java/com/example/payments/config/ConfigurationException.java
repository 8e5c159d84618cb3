package com.example.payments.config;

/**
 * A configuration value that the service refuses to start with.
 *
 * <p>The message is one line naming the key, the offending value and the allowed range, e.g.
 * {@code health.prober.interval: 'PT0S' is not allowed; allowed: a duration > PT0S}. {@code Main} prints it and exits
 * with status 2.
 */
public final class ConfigurationException extends RuntimeException {

    /**
     * Creates the exception.
     *
     * @param key     full config key, e.g. {@code shutdown.drain-timeout}
     * @param problem what is wrong and what is allowed, one line
     */
    public ConfigurationException(String key, String problem) {
        super(key + ": " + problem);
    }
}
