package com.example.payments.authorization;

import java.time.Duration;

import com.example.payments.config.ConfigValues;
import com.example.payments.config.ConfigurationException;

/**
 * Validated {@code authorization.*} configuration: the lifecycle of an authorization kept in the resource store.
 *
 * @param validity     {@code authorization.validity}, default {@code P7D}, from PT1S to P31D: how long an approved
 *                     authorization stays capturable after its {@code createdAt} ({@code expiresAt}); card networks
 *                     hold an authorization about a week
 * @param maxResources {@code authorization.in-memory.max-resources}, default 100000, from 1 to 10000000: resources
 *                     the in-memory resource store holds at most: authorizations, captures and voids together, and
 *                     apart the bound idempotency keys; beyond it a new one gets 503 with {@code Retry-After}. Read
 *                     only with
 *                     {@code idempotency.store: in-memory}
 * @param maxCaptures  {@code authorization.max-captures}, default 50, from 1 to 1000: captures of one authorization at
 *                     most (succeeded, declined and pending alike); beyond, 409
 */
public record AuthorizationSettings(Duration validity, int maxResources, int maxCaptures) {

    /** Default of {@code authorization.validity}. */
    public static final Duration DEFAULT_VALIDITY = Duration.ofDays(7);
    private static final Duration MIN_VALIDITY = Duration.ofSeconds(1);
    private static final Duration MAX_VALIDITY = Duration.ofDays(31);

    /**
     * Reads and validates the settings.
     *
     * @param values the configuration
     * @return the settings
     * @throws ConfigurationException naming the key and its allowed range
     */
    public static AuthorizationSettings create(ConfigValues values) {
        Duration validity = values.positiveDuration("authorization.validity", DEFAULT_VALIDITY);
        if (validity.compareTo(MIN_VALIDITY) < 0 || validity.compareTo(MAX_VALIDITY) > 0) {
            throw new ConfigurationException("authorization.validity", "'" + validity + "' is out of range; allowed: "
                    + "a duration from PT1S to P31D (P7D by default)");
        }
        int maxResources = (int) values.longInRange("authorization.in-memory.max-resources", 100_000, 1, 10_000_000);
        int maxCaptures = (int) values.longInRange("authorization.max-captures", 50, 1, 1000);
        return new AuthorizationSettings(validity, maxResources, maxCaptures);
    }
}
