package com.example.payments.config;

import java.util.Optional;

import io.helidon.config.Config;

/**
 * The shape a config tree must have where {@link ConfigValues} reads one value: one non-blank value under the key,
 * and an object (or an empty section) at every parent of the key. It checks the shape only; what the value means
 * (a duration, an integer, an enum constant) is the typed reader's business.
 *
 * <p>Each check throws a {@link ConfigurationException} naming the key (or the parent) and what it allows, e.g.
 * {@code health: PT1S} fails on {@code health} with "a value where an object is expected".
 */
final class ConfigShape {

    private final Config root;

    /**
     * A checker over a config root.
     *
     * @param root the whole configuration (keys are resolved from here, e.g. {@code health.prober.interval})
     */
    ConfigShape(Config root) {
        this.root = root;
    }

    /**
     * The one value under a key.
     *
     * @param key     full key
     * @param allowed what the key accepts, for the error message (e.g. {@code a duration > PT0S, e.g. PT5S})
     * @return the raw value (not trimmed), empty when the key is absent
     * @throws ConfigurationException when the key is empty, blank, a list or an object, or a parent is a value or a
     *                                list
     */
    Optional<String> value(String key, String allowed) {
        requireObjectParents(key);
        Config node = root.get(key);
        if (!node.exists()) {
            return Optional.empty();
        }
        if (node.type() != Config.Type.VALUE) {
            String shape = node.type() == Config.Type.LIST ? "a list" : "an object";
            throw new ConfigurationException(key, shape + " where one value is expected; allowed: " + allowed);
        }
        Optional<String> raw = node.asString().asOptional();
        if (raw.isEmpty() || raw.get().isBlank()) {
            throw new ConfigurationException(key, "empty; allowed: " + allowed + " (or no key at all for the default)");
        }
        return raw;
    }

    /**
     * The one value under a key, where an empty or blank value means "unset" on purpose (e.g. a Secret key blanked
     * when a rotation ends).
     *
     * @param key     full key
     * @param allowed what the key accepts, for the error message
     * @return the raw value, empty when the key is absent, empty or blank
     * @throws ConfigurationException when the key is a list or an object, or a parent is a value or a list
     */
    Optional<String> valueOrUnset(String key, String allowed) {
        requireObjectParents(key);
        Config node = root.get(key);
        if (node.exists() && node.type() == Config.Type.VALUE && node.asString().orElse("").isBlank()) {
            return Optional.empty();
        }
        return value(key, allowed);
    }

    // "health: PT1S" would leave every health.* key absent, or (over the shipped section) be merged away: either way
    // the defaults would be taken in silence.
    private void requireObjectParents(String key) {
        int dot = key.indexOf('.');
        while (dot > 0) {
            String parent = key.substring(0, dot);
            Config node = root.get(parent);
            // An empty section ("http:" with its keys commented out) reads as an empty value: that is no mistake.
            boolean value = node.hasValue() && !node.asString().orElse("").isBlank();
            if (node.type() == Config.Type.LIST || value) {
                throw new ConfigurationException(parent, (value ? "a value" : "a list") + " where an object is "
                                                         + "expected; allowed: an object with keys such as "
                                                         + key.substring(dot + 1));
            }
            dot = key.indexOf('.', dot + 1);
        }
    }
}
