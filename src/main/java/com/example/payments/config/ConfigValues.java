package com.example.payments.config;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Arrays;
import java.util.Locale;
import java.util.Optional;
import java.util.stream.Collectors;

import io.helidon.config.Config;

/**
 * Reads typed values from a config tree and turns every mistake into a {@link ConfigurationException} that names the
 * key and the allowed range, so a typo fails at startup instead of at the first request (or at the first SIGTERM).
 *
 * <p>Durations are ISO-8601 ({@code PT0.5S}, {@code PT10S}, {@code PT24H}).
 */
public final class ConfigValues {

    private final Config root;

    private ConfigValues(Config root) {
        this.root = root;
    }

    /**
     * Creates a reader over the given config root.
     *
     * @param root the whole configuration (keys are resolved from here, e.g. {@code health.prober.interval})
     * @return the reader
     */
    public static ConfigValues create(Config root) {
        return new ConfigValues(root);
    }

    /**
     * A duration strictly greater than zero.
     *
     * @param key          full key
     * @param defaultValue used when the key is absent
     * @return the duration
     * @throws ConfigurationException when unparsable or not positive
     */
    public Duration positiveDuration(String key, Duration defaultValue) {
        Duration value = duration(key, defaultValue);
        if (value.isZero() || value.isNegative()) {
            throw new ConfigurationException(key, "'" + value + "' is not allowed; allowed: a duration > PT0S");
        }
        return value;
    }

    /**
     * A duration greater than or equal to zero.
     *
     * @param key          full key
     * @param defaultValue used when the key is absent
     * @return the duration
     * @throws ConfigurationException when unparsable or negative
     */
    public Duration nonNegativeDuration(String key, Duration defaultValue) {
        Duration value = duration(key, defaultValue);
        if (value.isNegative()) {
            throw new ConfigurationException(key, "'" + value + "' is not allowed; allowed: a duration >= PT0S");
        }
        return value;
    }

    /**
     * An integer within {@code [min, max]}.
     *
     * @param key          full key
     * @param defaultValue used when the key is absent
     * @param min          smallest allowed value
     * @param max          largest allowed value
     * @return the value
     * @throws ConfigurationException when not an integer or out of range
     */
    public long longInRange(String key, long defaultValue, long min, long max) {
        Optional<String> raw = string(key);
        if (raw.isEmpty()) {
            return defaultValue;
        }
        long value;
        try {
            value = Long.parseLong(raw.get().trim());
        } catch (NumberFormatException e) {
            throw new ConfigurationException(key, "'" + raw.get() + "' is not an integer; allowed: " + range(min, max));
        }
        if (value < min || value > max) {
            throw new ConfigurationException(key, "'" + value + "' is out of range; allowed: " + range(min, max));
        }
        return value;
    }

    /**
     * One of the constants of an enum, matched case-insensitively against their lower-case, dash-separated names
     * ({@code IN_MEMORY} is written {@code in-memory}).
     *
     * @param key          full key
     * @param type         enum type
     * @param defaultValue used when the key is absent
     * @param <E>          enum type
     * @return the constant
     * @throws ConfigurationException when the value names no constant
     */
    public <E extends Enum<E>> E oneOf(String key, Class<E> type, E defaultValue) {
        Optional<String> raw = string(key);
        if (raw.isEmpty()) {
            return defaultValue;
        }
        for (E constant : type.getEnumConstants()) {
            if (configName(constant).equalsIgnoreCase(raw.get().trim())) {
                return constant;
            }
        }
        String allowed = Arrays.stream(type.getEnumConstants()).map(ConfigValues::configName)
                .collect(Collectors.joining(" | "));
        throw new ConfigurationException(key, "'" + raw.get() + "' is not allowed; allowed: " + allowed);
    }

    /**
     * A string value, if present and not blank.
     *
     * @param key full key
     * @return the value
     */
    public Optional<String> string(String key) {
        return root.get(key).asString().asOptional().filter(s -> !s.isBlank());
    }

    /**
     * The config name of an enum constant: lower case, underscores as dashes.
     *
     * @param constant the constant
     * @return e.g. {@code in-memory}
     */
    public static String configName(Enum<?> constant) {
        return constant.name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    private Duration duration(String key, Duration defaultValue) {
        Optional<String> raw = string(key);
        if (raw.isEmpty()) {
            return defaultValue;
        }
        try {
            return Duration.parse(raw.get().trim());
        } catch (DateTimeParseException e) {
            throw new ConfigurationException(key, "'" + raw.get() + "' is not an ISO-8601 duration such as PT5S");
        }
    }

    private static String range(long min, long max) {
        if (max == Long.MAX_VALUE) {
            return "an integer >= " + min;
        }
        return "an integer from " + min + " to " + max;
    }
}
