package com.example.payments.authorization;

import java.net.URI;
import java.time.Duration;
import java.util.Optional;

import com.example.payments.config.ConfigValues;
import com.example.payments.config.ConfigurationException;
import com.example.payments.issuer.IssuerSettings;

/**
 * Validated {@code authorizer.*} configuration.
 *
 * @param timeout   {@code authorizer.timeout}, default PT5S: longest wait for the issuer; a request that exceeds it
 *                  answers 504 and releases its idempotency key. Must be shorter than {@code shutdown.drain-timeout}
 *                  so that no request outlives the drain
 * @param type      {@code authorizer.type}, default {@code rule-based}: the built-in test-card rules, or {@code http}
 *                  to call an issuer API at {@code authorizer.http.uri}
 * @param httpUri   {@code authorizer.http.uri}, no default, required with {@code type: http}: base URI of the issuer
 *                  API ({@code http://} or {@code https://}, e.g. {@code http://issuer.internal:8090}); the
 *                  authorizer posts to {@code <uri>/v1/authorizations}
 * @param ruleBased the built-in authorizer's simulated issuer: {@code authorizer.default-limit} (1000000 minor units),
 *                  {@code authorizer.simulated-latency} (PT0S), {@code authorizer.simulated-latency-jitter} (PT0S),
 *                  {@code authorizer.ledger-retention} (P8D, at least {@code authorization.validity}),
 *                  {@code authorizer.ledger-max-entries} (100000)
 * @param reverseAfter {@code authorizer.unknown-outcome.reverse-after}, default PT1M, from PT1S to PT1H: how long an
 *                  authorization whose outcome is unknown (502, 504, a drain cut-off) waits for its client's retry
 *                  before the reconciler reverses it
 * @param acquirerDeduplicates {@code authorizer.acquirer-deduplicates}, default {@code true}: the acquirer answers a
 *                  repeated attempt id with its first decision, so a retry sends the same attempt id again.
 *                  {@code false}: every attempt is recorded before its call, every execution sends an attempt id of
 *                  its own, and a retry first reverses the earlier attempts of its request (see docs/idempotency.md)
 */
public record AuthorizerSettings(Duration timeout, Type type, Optional<URI> httpUri, IssuerSettings ruleBased,
                                 Duration reverseAfter, boolean acquirerDeduplicates) {

    /**
     * Settings for an acquirer that deduplicates attempt ids.
     *
     * @param timeout      {@code authorizer.timeout}
     * @param type         {@code authorizer.type}
     * @param httpUri      {@code authorizer.http.uri}
     * @param ruleBased    the built-in issuer's settings
     * @param reverseAfter {@code authorizer.unknown-outcome.reverse-after}
     */
    public AuthorizerSettings(Duration timeout, Type type, Optional<URI> httpUri, IssuerSettings ruleBased,
                              Duration reverseAfter) {
        this(timeout, type, httpUri, ruleBased, reverseAfter, true);
    }

    /** Shortest {@code authorizer.unknown-outcome.reverse-after}. */
    public static final Duration MIN_REVERSE_AFTER = Duration.ofSeconds(1);
    /** Longest {@code authorizer.unknown-outcome.reverse-after}: a hold left longer is a cardholder's problem. */
    public static final Duration MAX_REVERSE_AFTER = Duration.ofHours(1);
    private static final String REVERSE_AFTER_KEY = "authorizer.unknown-outcome.reverse-after";

    private static final String URI_KEY = "authorizer.http.uri";
    private static final String URI_ALLOWED = "an absolute http:// or https:// URI with a host";

    /** Which {@link Authorizer} the service calls. */
    public enum Type {
        /** {@link RuleBasedAuthorizer}: the test-card rules in this process. */
        RULE_BASED,
        /** {@link HttpAuthorizer}: an issuer API over HTTP (the issuer simulator in tests). */
        HTTP
    }

    /**
     * Reads and validates the settings.
     *
     * @param values config reader
     * @return settings
     * @throws ConfigurationException naming the key when a value is missing or out of range
     */
    public static AuthorizerSettings create(ConfigValues values) {
        Type type = values.oneOf("authorizer.type", Type.class, Type.RULE_BASED);
        // A URI is checked even when the rule-based authorizer ignores it: a mistake fails now, not at the switch.
        boolean checkUri = type == Type.HTTP || values.string(URI_KEY, URI_ALLOWED).isPresent();
        Optional<URI> uri = checkUri ? Optional.of(httpUri(values)) : Optional.empty();
        return new AuthorizerSettings(
                values.positiveDuration("authorizer.timeout", Duration.ofSeconds(5)),
                type,
                type == Type.HTTP ? uri : Optional.empty(),
                IssuerSettings.create(values, "authorizer"),
                reverseAfter(values),
                values.oneOf("authorizer.acquirer-deduplicates", Toggle.class, Toggle.TRUE) == Toggle.TRUE);
    }

    private enum Toggle { TRUE, FALSE }

    private static Duration reverseAfter(ConfigValues values) {
        Duration after = values.positiveDuration(REVERSE_AFTER_KEY, Duration.ofMinutes(1));
        if (after.compareTo(MIN_REVERSE_AFTER) < 0 || after.compareTo(MAX_REVERSE_AFTER) > 0) {
            throw new ConfigurationException(REVERSE_AFTER_KEY, "'" + after + "' is not allowed; allowed: a duration "
                    + "from PT1S to PT1H (how long an unknown outcome waits for the client's retry before it is "
                    + "reversed)");
        }
        return after;
    }

    // The value is never echoed: a URI may carry credentials.
    private static URI httpUri(ConfigValues values) {
        String allowed = "allowed: an absolute http:// or https:// URI with a host and no query, e.g. "
                         + "http://issuer.internal:8090, when authorizer.type is http";
        String raw = values.string(URI_KEY, URI_ALLOWED)
                .orElseThrow(() -> new ConfigurationException(URI_KEY, "missing; " + allowed));
        URI uri;
        try {
            uri = new URI(raw.trim());
        } catch (java.net.URISyntaxException e) {
            throw new ConfigurationException(URI_KEY, "not a URI; " + allowed);
        }
        boolean http = "http".equalsIgnoreCase(uri.getScheme()) || "https".equalsIgnoreCase(uri.getScheme());
        if (!http || uri.getHost() == null || uri.getRawQuery() != null || uri.getRawFragment() != null) {
            throw new ConfigurationException(URI_KEY, "not an http:// or https:// URI with a host; " + allowed);
        }
        if (uri.getPort() == 0 || uri.getPort() > 65535) {
            throw new ConfigurationException(URI_KEY, "port " + uri.getPort() + " is out of range (1 to 65535); "
                                                      + allowed);
        }
        return uri;
    }
}
