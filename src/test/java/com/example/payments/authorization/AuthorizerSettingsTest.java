package com.example.payments.authorization;

import java.net.URI;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

import com.example.payments.config.ConfigValues;
import com.example.payments.config.ConfigurationException;
import com.example.payments.issuer.IssuerSettings;

import io.helidon.config.Config;
import io.helidon.config.ConfigSources;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * {@code authorizer.*}: the type, the issuer URI the {@code http} type requires, and the built-in issuer's settings.
 */
class AuthorizerSettingsTest {

    private static AuthorizerSettings settings(Map<String, String> overrides) {
        return AuthorizerSettings.create(ConfigValues.create(Config.builder()
                .disableEnvironmentVariablesSource()
                .disableSystemPropertiesSource()
                .addSource(ConfigSources.create(overrides))
                .addSource(ConfigSources.classpath("application.yaml"))
                .build()));
    }

    @Test
    void theDefaultIsTheRuleBasedAuthorizerWithItsLedgerBounded() {
        AuthorizerSettings defaults = settings(Map.of());
        assertThat(defaults.type(), is(AuthorizerSettings.Type.RULE_BASED));
        assertThat(defaults.httpUri(), is(Optional.empty()));
        assertThat(defaults.ruleBased(), is(new IssuerSettings(1_000_000, Duration.ZERO, Duration.ZERO,
                                                                Duration.ofDays(8), 100_000)));
        assertThat(defaults.reverseAfter(), is(Duration.ofMinutes(1)));
        assertThat(settings(Map.of("authorizer.unknown-outcome.reverse-after", "PT1S")).reverseAfter(),
                   is(Duration.ofSeconds(1)));
    }

    @Test
    void theHttpTypeTakesTheIssuerUri() {
        AuthorizerSettings http = settings(Map.of("authorizer.type", "http",
                                                  "authorizer.http.uri", "https://issuer.internal:8443/api"));
        assertThat(http.type(), is(AuthorizerSettings.Type.HTTP));
        assertThat(http.httpUri(), is(Optional.of(URI.create("https://issuer.internal:8443/api"))));
    }

    @ParameterizedTest(name = "{0}={1}")
    @CsvSource(delimiter = '#', value = {
            "authorizer.type#soap#authorizer.type: 'soap' is not allowed; allowed: rule-based | http",
            "authorizer.http.uri#ftp://issuer.internal#authorizer.http.uri: not an http:// or https:// URI with a "
            + "host; allowed: an absolute http:// or https:// URI with a host and no query, e.g. "
            + "http://issuer.internal:8090, when authorizer.type is http",
            "authorizer.http.uri#issuer.internal:8090#authorizer.http.uri: not an http:// or https:// URI with a "
            + "host; allowed: an absolute http:// or https:// URI with a host and no query, e.g. "
            + "http://issuer.internal:8090, when authorizer.type is http",
            "authorizer.http.uri#http://issuer internal#authorizer.http.uri: not a URI; allowed: an absolute "
            + "http:// or https:// URI with a host and no query, e.g. http://issuer.internal:8090, when "
            + "authorizer.type is http",
            "authorizer.http.uri#http://issuer.internal/?key=secret#authorizer.http.uri: not an http:// or https:// "
            + "URI with a host; allowed: an absolute http:// or https:// URI with a host and no query, e.g. "
            + "http://issuer.internal:8090, when authorizer.type is http",
            "authorizer.ledger-max-entries#0#authorizer.ledger-max-entries: '0' is out of range; allowed: an "
            + "integer from 1 to 2147483647",
            "authorizer.ledger-retention#PT0S#authorizer.ledger-retention: 'PT0S' is not allowed; allowed: a "
            + "duration > PT0S",
            "authorizer.unknown-outcome.reverse-after#PT0.5S#authorizer.unknown-outcome.reverse-after: 'PT0.5S' is "
            + "not allowed; allowed: a duration from PT1S to PT1H (how long an unknown outcome waits for the "
            + "client's retry before it is reversed)",
            "authorizer.unknown-outcome.reverse-after#PT2H#authorizer.unknown-outcome.reverse-after: 'PT2H' is not "
            + "allowed; allowed: a duration from PT1S to PT1H (how long an unknown outcome waits for the client's "
            + "retry before it is reversed)"})
    void aWrongValueFailsNamingTheKeyWithoutEchoingAUri(String key, String value, String message) {
        Map<String, String> config = new HashMap<>(Map.of("authorizer.type", "http",
                                                          "authorizer.http.uri", "http://127.0.0.1:8090"));
        config.put(key, value);
        ConfigurationException e = assertThrows(ConfigurationException.class, () -> settings(config));
        assertThat(e.getMessage(), is(message));
    }

    @Test
    void theHttpTypeWithoutAUriFailsNamingTheKey() {
        ConfigurationException e = assertThrows(ConfigurationException.class,
                                                () -> settings(Map.of("authorizer.type", "http")));
        assertThat(e.getMessage(), is("authorizer.http.uri: missing; allowed: an absolute http:// or https:// URI "
                                      + "with a host and no query, e.g. http://issuer.internal:8090, when "
                                      + "authorizer.type is http"));
    }
}
