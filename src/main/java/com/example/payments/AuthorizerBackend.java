package com.example.payments;

import java.util.Map;

import com.example.payments.authorization.Authorizer;
import com.example.payments.authorization.AuthorizerSettings;
import com.example.payments.authorization.HttpAuthorizer;
import com.example.payments.authorization.RuleBasedAuthorizer;

import io.helidon.metrics.api.MeterRegistry;

/**
 * The {@link Authorizer} of the configured {@code authorizer.type} and the resources it brings.
 *
 * @param authorizer the issuer seam
 * @param resources  closed in the shutdown cleanup phase, by name ({@code issuer-client} with {@code http}; none
 *                   with {@code rule-based})
 */
record AuthorizerBackend(Authorizer authorizer, Map<String, AutoCloseable> resources) {

    /**
     * Builds the authorizer; nothing connects yet.
     *
     * @param settings {@code authorizer.*}
     * @param meters   the service's registry (the built-in issuer's metrics, the http authorizer's retries)
     * @return the authorizer and its resources
     */
    static AuthorizerBackend create(AuthorizerSettings settings, MeterRegistry meters) {
        return switch (settings.type()) {
        case RULE_BASED -> new AuthorizerBackend(RuleBasedAuthorizer.create(settings, meters), Map.of());
        case HTTP -> {
            HttpAuthorizer http = HttpAuthorizer.create(settings.httpUri().orElseThrow(), settings.timeout(),
                                                      meters, settings.acquirerDeduplicates());
            yield new AuthorizerBackend(http, Map.of("issuer-client", http));
        }
        };
    }
}
