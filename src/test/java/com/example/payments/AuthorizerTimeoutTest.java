package com.example.payments;

import java.net.http.HttpResponse;
import java.util.Map;

import com.example.payments.testing.Http;

import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.is;

/**
 * The authorizer is bounded by {@code authorizer.timeout}: a slow issuer answers 504 and frees the key.
 */
class AuthorizerTimeoutTest {

    @Test
    void aSlowIssuerIsAGatewayTimeoutAndTheKeyIsReleasedForARetry() throws Exception {
        try (TestService service = TestService.start(Map.of("authorizer.timeout", "PT0.3S",
                                                            "authorizer.simulated-latency", "PT2S"))) {
            double before = service.authorizerInvocations();
            HttpResponse<String> first = service.post("slow-issuer", Http.VALID_BODY);
            assertThat(first.statusCode(), is(504));
            assertThat(first.body(), containsString("issuer-timeout"));
            assertThat(service.post("slow-issuer", Http.VALID_BODY).statusCode(), is(504));
            assertThat(service.authorizerInvocations() - before, is(2.0));
            assertThat(service.metric("idempotency_keys_released_total", Map.of("reason", "issuer_timeout")), is(2.0));
        }
    }
}
