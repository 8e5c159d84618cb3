package com.example.payments.authorization;

import java.time.Duration;
import java.util.Map;

import com.example.payments.config.ConfigValues;

import io.helidon.config.Config;
import io.helidon.config.ConfigSources;
import io.helidon.metrics.api.Counter;
import io.helidon.metrics.api.MeterRegistry;
import io.helidon.metrics.api.Metrics;
import io.helidon.metrics.api.MetricsConfig;
import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.greaterThanOrEqualTo;
import static org.hamcrest.Matchers.is;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * The built-in authorizer deduplicates like the issuer simulator: one decision per attempt id, counted once.
 */
class RuleBasedAuthorizerTest {

    private final MeterRegistry meters = Metrics.createMeterRegistry(MetricsConfig.create());

    private RuleBasedAuthorizer authorizer(Map<String, String> config) {
        return RuleBasedAuthorizer.create(AuthorizerSettings.create(ConfigValues.create(Config.builder()
                .disableEnvironmentVariablesSource()
                .disableSystemPropertiesSource()
                .addSource(ConfigSources.create(config))
                .addSource(ConfigSources.classpath("application.yaml"))
                .build())), meters);
    }

    private static AuthorizationAttempt attempt(String attemptId, String card, long amount) {
        return new AuthorizationAttempt(attemptId, new AuthorizationRequest("m_123", "order-42",
                new Amount(amount, "EUR"), new Card(card, 12, 2030, "123")));
    }

    /** A decision without its time. */
    private static String outcome(Authorizer.Decision decision) {
        return decision.approved() ? "approved" : "declined " + decision.declineCode();
    }

    @Test
    void theSameAttemptIdGetsTheSameDecisionAndIsCountedOnce() throws Exception {
        RuleBasedAuthorizer authorizer = authorizer(Map.of());
        long authorizations = count("issuer_authorizations");
        long duplicates = count("issuer_duplicate_attempts");
        Authorizer.Decision first = authorizer.authorize(attempt("att_1", "4000000000000002", 1299));
        Authorizer.Decision retry = authorizer.authorize(attempt("att_1", "4000000000000002", 1299));

        assertThat(outcome(first), is("declined card_declined"));
        assertThat(retry, is(first));
        assertThat(count("issuer_authorizations") - authorizations, is(1L));
        assertThat(count("issuer_duplicate_attempts") - duplicates, is(1L));
    }

    @Test
    void theTestCardsAndTheLimitDecide() throws Exception {
        RuleBasedAuthorizer authorizer = authorizer(Map.of("authorizer.default-limit", "5000"));
        assertThat(outcome(authorizer.authorize(attempt("att_1", "4111111111111111", 5000))), is("approved"));
        assertThat(outcome(authorizer.authorize(attempt("att_2", "5555555555554444", 5001))),
                   is("declined limit_exceeded"));
        assertThat(outcome(authorizer.authorize(attempt("att_3", "4000000000009995", 10))),
                   is("declined insufficient_funds"));
        assertThrows(Authorizer.IssuerUnavailableException.class,
                     () -> authorizer.authorize(attempt("att_4", "4000000000000119", 10)));
    }

    @Test
    void theSimulatedLatencyHoldsTheCall() throws Exception {
        RuleBasedAuthorizer authorizer = authorizer(Map.of("authorizer.simulated-latency", "PT0.2S"));
        long start = System.nanoTime();
        authorizer.authorize(attempt("att_1", "4111111111111111", 10));
        assertThat(Duration.ofNanos(System.nanoTime() - start), greaterThanOrEqualTo(Duration.ofMillis(200)));
    }

    // Helidon's registries share one underlying registry, so tests compare counts before and after.
    private long count(String name) {
        return meters.meters(meter -> meter.id().name().equals(name)).stream()
                .mapToLong(meter -> ((Counter) meter).count()).sum();
    }
}
