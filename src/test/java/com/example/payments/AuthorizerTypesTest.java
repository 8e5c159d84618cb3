package com.example.payments;

import java.net.ServerSocket;
import java.net.http.HttpResponse;
import java.util.Map;
import java.util.UUID;

import com.example.payments.authorization.HttpAuthorizer;
import com.example.payments.testing.Http;

import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.is;

/**
 * {@code authorizer.type} wired through {@code Main}: the built-in issuer's metrics land on the service's
 * {@code /metrics}; the {@code http} authorizer answers 502 when nothing listens at {@code authorizer.http.uri}, and
 * its client is among the resources closed at shutdown.
 */
class AuthorizerTypesTest {

    @Test
    void theRuleBasedIssuerCountsItsDecisionsOnTheServiceMetrics() throws Exception {
        try (TestService service = TestService.start(Map.of())) {
            assertThat(service.post(UUID.randomUUID().toString(), Http.VALID_BODY).statusCode(), is(201));
            assertThat(service.post(UUID.randomUUID().toString(), Http.VALID_BODY.replace("4111111111111111",
                    "4000000000000002")).statusCode(), is(201));

            assertThat(service.metric("issuer_authorizations_total", Map.of("decision", "approved")), is(1.0));
            assertThat(service.metric("issuer_authorizations_total", Map.of("decision", "declined")), is(1.0));
            assertThat(service.metric("issuer_duplicate_attempts_total", Map.of()), is(0.0));
        }
    }

    @Test
    void theHttpAuthorizerAnswers502WhenNoIssuerListensAndIsClosedAtShutdown() throws Exception {
        int closedPort;
        try (ServerSocket socket = new ServerSocket(0)) {
            closedPort = socket.getLocalPort();
        }
        try (TestService service = TestService.start(Map.of("authorizer.type", "http",
                "authorizer.http.uri", "http://127.0.0.1:" + closedPort, "authorizer.timeout", "PT2S"))) {
            HttpResponse<String> response = service.post(UUID.randomUUID().toString(), Http.VALID_BODY);

            assertThat(response.body(), response.statusCode(), is(502));
            assertThat(response.body(), containsString("\"type\":\"https://payments.example.com/problems/"
                                                       + "issuer-unavailable\""));
            assertThat(service.metric("authorizer_invocations_total", Map.of("outcome", "unknown")), is(1.0));
            assertThat(service.running().resources().values().stream().map(Object::getClass).toList(),
                       hasItem(HttpAuthorizer.class));
        }
    }
}
