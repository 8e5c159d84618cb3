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
 * <p>A key that is absent takes its default. A key that is present must hold one non-empty value: an empty value
 * ({@code interval: ""}, {@code HEALTH_PROBER_INTERVAL=}), a list or an object where one value is expected, or a
 * value where an object is expected ({@code health: PT1S}) is an error, never a silent default.
 *
 * <p>Durations are ISO-8601 ({@code PT0.5S}, {@code PT10S}, {@code PT24H}), in whole milliseconds, at most
 * {@link #MAX_DURATION} (a year: longer is a typo, and sums of such values would overflow).
 *
 * <p>Whether a key holds one value at all, under parents that are objects, is checked by {@link ConfigShape}; this
 * class parses that value and checks its range.
 */
public final class ConfigValues {

    /** Longest accepted duration: PT8760H (365 days). */
    public static final Duration MAX_DURATION = Duration.ofDays(365);

    private final ConfigShape shape;

    private ConfigValues(ConfigShape shape) {
        this.shape = shape;
    }

    /**
     * Creates a reader over the given config root.
     *
     * @param root the whole configuration (keys are resolved from here, e.g. {@code health.prober.interval})
     * @return the reader
     */
    public static ConfigValues create(Config root) {
        return new ConfigValues(new ConfigShape(root));
    }

    /**
     * A duration strictly greater than zero, in whole milliseconds, at most {@link #MAX_DURATION}.
     *
     * @param key          full key
     * @param defaultValue used when the key is absent
     * @return the duration
     * @throws ConfigurationException when empty, unparsable, not positive, finer than 1 ms or longer than a year
     */
    public Duration positiveDuration(String key, Duration defaultValue) {
        Duration value = duration(key, defaultValue, "a duration > PT0S");
        if (value.isZero() || value.isNegative()) {
            throw new ConfigurationException(key, "'" + value + "' is not allowed; allowed: a duration > PT0S");
        }
        return value;
    }

    /**
     * A duration greater than or equal to zero, in whole milliseconds, at most {@link #MAX_DURATION}.
     *
     * @param key          full key
     * @param defaultValue used when the key is absent
     * @return the duration
     * @throws ConfigurationException when empty, unparsable, negative, finer than 1 ms or longer than a year
     */
    public Duration nonNegativeDuration(String key, Duration defaultValue) {
        Duration value = duration(key, defaultValue, "a duration >= PT0S");
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
     * @throws ConfigurationException when empty, not an integer or out of range
     */
    public long longInRange(String key, long defaultValue, long min, long max) {
        Optional<String> raw = shape.value(key, range(min, max));
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
     * A fraction within {@code [0, 1]}, e.g. a sampling ratio.
     *
     * @param key          full key
     * @param defaultValue used when the key is absent
     * @return the value
     * @throws ConfigurationException when empty, not a decimal number or out of range
     */
    public double ratio(String key, double defaultValue) {
        String allowed = "a decimal number from 0.0 to 1.0";
        Optional<String> raw = shape.value(key, allowed);
        if (raw.isEmpty()) {
            return defaultValue;
        }
        double value;
        try {
            value = Double.parseDouble(raw.get().trim());
        } catch (NumberFormatException e) {
            throw new ConfigurationException(key, "'" + raw.get() + "' is not a number; allowed: " + allowed);
        }
        if (!(value >= 0 && value <= 1)) {
            throw new ConfigurationException(key, "'" + raw.get().trim() + "' is out of range; allowed: " + allowed);
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
     * @throws ConfigurationException when empty or the value names no constant
     */
    public <E extends Enum<E>> E oneOf(String key, Class<E> type, E defaultValue) {
        String allowed = Arrays.stream(type.getEnumConstants()).map(ConfigValues::configName)
                .collect(Collectors.joining(" | "));
        Optional<String> raw = shape.value(key, allowed);
        if (raw.isEmpty()) {
            return defaultValue;
        }
        for (E constant : type.getEnumConstants()) {
            if (configName(constant).equalsIgnoreCase(raw.get().trim())) {
                return constant;
            }
        }
        throw new ConfigurationException(key, "'" + raw.get() + "' is not allowed; allowed: " + allowed);
    }

    /**
     * A string value, if present.
     *
     * @param key full key
     * @return the value, empty when the key is absent
     * @throws ConfigurationException when the key is present but empty, a list or an object
     */
    public Optional<String> string(String key) {
        return string(key, "a non-empty value");
    }

    /**
     * A string value, if present.
     *
     * @param key     full key
     * @param allowed what the key accepts, for the error message (e.g. {@code redis://host:port})
     * @return the value, empty when the key is absent
     * @throws ConfigurationException when the key is present but empty, a list or an object
     */
    public Optional<String> string(String key, String allowed) {
        return shape.value(key, allowed);
    }

    /**
     * A string value where an empty value means "unset" on purpose (e.g. a Secret key blanked when a rotation ends).
     *
     * @param key     full key
     * @param allowed what the key accepts, for the error message
     * @return the value, empty when the key is absent or blank
     * @throws ConfigurationException when the key is a list or an object
     */
    public Optional<String> stringOrUnset(String key, String allowed) {
        return shape.valueOrUnset(key, allowed);
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

    private Duration duration(String key, Duration defaultValue, String allowed) {
        Optional<String> raw = shape.value(key, allowed + ", e.g. PT5S");
        if (raw.isEmpty()) {
            return defaultValue;
        }
        Duration value;
        try {
            value = Duration.parse(raw.get().trim());
        } catch (DateTimeParseException e) {
            throw new ConfigurationException(key, "'" + raw.get() + "' is not an ISO-8601 duration; allowed: " + allowed
                                                  + ", e.g. PT5S");
        }
        if (value.getNano() % 1_000_000 != 0) {
            throw new ConfigurationException(key, "'" + value + "' is finer than a millisecond; allowed: " + allowed
                                                  + " in whole milliseconds, e.g. PT0.25S");
        }
        if (value.abs().compareTo(MAX_DURATION) > 0) {
            throw new ConfigurationException(key, "'" + value + "' is longer than a year; allowed: " + allowed
                                                  + " and <= " + MAX_DURATION);
        }
        return value;
    }

    private static String range(long min, long max) {
        if (max == Long.MAX_VALUE) {
            return "an integer >= " + min;
        }
        return "an integer from " + min + " to " + max;
    }
}
