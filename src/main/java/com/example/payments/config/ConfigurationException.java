package com.example.payments.config;

import java.time.format.DateTimeParseException;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.helidon.common.config.ConfigException;

/**
 * A configuration value that the service refuses to start with.
 *
 * <p>The message is one line naming the key, the offending value and the allowed range, e.g.
 * {@code health.prober.interval: 'PT0S' is not allowed; allowed: a duration > PT0S}. {@code Main} prints it and exits
 * with status 2.
 */
public final class ConfigurationException extends RuntimeException {

    // Helidon's ConfigMappingException names the key and the value only in its message.
    private static final Pattern HELIDON_MAPPING =
            Pattern.compile("Mapping of value '(.*)' stored under key '([^']*)'");
    private static final Pattern HELIDON_KEY = Pattern.compile("under key '([^']*)'");

    /**
     * Creates the exception.
     *
     * @param key     full config key, e.g. {@code shutdown.drain-timeout}
     * @param problem what is wrong and what is allowed, one line
     */
    public ConfigurationException(String key, String problem) {
        super(key + ": " + problem);
    }

    /**
     * The same mistake reported by Helidon's config mapping (a key Helidon reads itself, such as
     * {@code server.max-payload-size}), as one line in this service's form: {@code key: 'value' is not ...; allowed:
     * ...}. Helidon's own message names a mapper lambda instead of what the key accepts.
     *
     * @param e Helidon's exception
     * @return the exception to report, empty when Helidon's message names no key
     */
    public static Optional<ConfigurationException> from(ConfigException e) {
        String message = e.getMessage() == null ? "" : e.getMessage();
        String allowed = allowedBy(e);
        Matcher mapping = HELIDON_MAPPING.matcher(message);
        if (mapping.find()) {
            return Optional.of(new ConfigurationException(mapping.group(2), "'" + mapping.group(1)
                                                                            + "' is not valid; allowed: " + allowed));
        }
        Matcher key = HELIDON_KEY.matcher(message);
        if (key.find()) {
            return Optional.of(new ConfigurationException(key.group(1), "not valid; allowed: " + allowed));
        }
        return Optional.empty();
    }

    private static String allowedBy(Throwable e) {
        for (Throwable cause = e; cause != null; cause = cause.getCause()) {
            if (cause instanceof NumberFormatException) {
                return "a number";
            }
            if (cause instanceof DateTimeParseException) {
                return "an ISO-8601 duration such as PT30S";
            }
        }
        return "a value of the type Helidon's WebServer configuration reference gives for this key";
    }
}
