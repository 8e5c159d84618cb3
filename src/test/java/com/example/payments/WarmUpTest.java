package com.example.payments;

import java.util.Map;
import java.util.UUID;

import com.example.payments.testing.Http;

import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;

/**
 * The startup warm-up (DESIGN §3): startup completes after the sandbox answered every synthetic request as expected,
 * counted in its own metric, and nothing of it reaches the real store, issuer, metrics or quota.
 */
class WarmUpTest {

    private static final int REQUESTS = 64;

    @Test
    void startupCompletesAfterTheWarmUpWhichTouchesNothingReal() throws Exception {
        try (TestService service = TestService.start(Map.of("warm-up.requests", String.valueOf(REQUESTS),
                                                            "idempotency.max-keys", "1"))) {
            assertThat(service.metric("warm_up_requests_total", Map.of("outcome", "answered")), is((double) REQUESTS));
            assertThat(service.metric("warm_up_requests_total", Map.of("outcome", "failed")), is(0.0));
            // Not one of the sandbox's authorizations reached the real issuer, metrics or request histogram.
            assertThat(service.metric("issuer_authorizations_total", Map.of()), is(0.0));
            assertThat(service.authorizerInvocations(), is(0.0));
            assertThat(service.metric("authorizations_total", Map.of()), is(0.0));
            assertThat(service.metric("idempotency_requests_total", Map.of()), is(0.0));
            assertThat(service.metric("http_server_request_duration_seconds_count", Map.of("method", "POST")),
                       is(0.0));
            // The real store holds none of its keys: with room for one key, the first real request takes it.
            assertThat(service.post(UUID.randomUUID().toString(), Http.VALID_BODY).statusCode(), is(201));
            assertThat(service.post(UUID.randomUUID().toString(), Http.VALID_BODY).statusCode(), is(503));
            assertThat(service.metric("issuer_authorizations_total", Map.of()), is(1.0));
        }
    }

    @Test
    void aWarmUpOfZeroRequestsIsOff() throws Exception {
        try (TestService service = TestService.start(Map.of("warm-up.requests", "0"))) {
            assertThat(service.metric("warm_up_requests_total", Map.of()), is(0.0));
        }
    }
}
