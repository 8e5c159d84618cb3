package com.example.payments;

import java.util.Map;
import java.util.UUID;

import com.example.payments.testing.Http;
import com.example.payments.testing.TestCredentials;

import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;

/**
 * The startup warm-up: startup completes after the sandbox answered every synthetic request as expected,
 * counted in its own metric, and nothing of it reaches the real store, issuer, metrics or quota.
 */
class WarmUpTest {

    private static final int REQUESTS = 64;

    @Test
    void startupCompletesAfterTheWarmUpWhichTouchesNothingReal() throws Exception {
        // A timeout no loaded test machine reaches: every request must be sent and answered.
        try (TestService service = TestService.start(Map.of("warm-up.requests", String.valueOf(REQUESTS),
                                                            "warm-up.timeout", "PT60S",
                                                            "idempotency.max-keys", "2",
                                                            "idempotency.merchant-quota.max-records", "1",
                                                            "idempotency.merchant-quota.max-in-flight", "1"))) {
            assertThat(service.metric("warm_up_requests_total", Map.of("outcome", "answered")), is((double) REQUESTS));
            assertThat(service.metric("warm_up_requests_total", Map.of("outcome", "failed")), is(0.0));
            // Not one of the sandbox's authorizations reached the real issuer, metrics or request histogram.
            assertThat(service.metric("issuer_authorizations_total", Map.of()), is(0.0));
            assertThat(service.authorizerInvocations(), is(0.0));
            assertThat(service.metric("authorizations_total", Map.of()), is(0.0));
            assertThat(service.metric("idempotency_requests_total", Map.of()), is(0.0));
            assertThat(service.metric("http_server_request_duration_seconds_count", Map.of("method", "POST")),
                       is(0.0));
            // The real store holds none of its keys: with room for two keys, one per merchant, both merchants' first
            // real requests take them.
            assertThat(service.post(UUID.randomUUID().toString(), Http.VALID_BODY).statusCode(), is(201));
            assertThat(Http.post(service.business("/v1/authorizations"), UUID.randomUUID().toString(),
                                 Http.VALID_BODY.replace(TestCredentials.MERCHANT, TestCredentials.OTHER_MERCHANT),
                                 TestCredentials.bearer(TestCredentials.OTHER_KEY)).statusCode(), is(201));
            assertThat(service.metric("issuer_authorizations_total", Map.of()), is(2.0));
        }
    }

    @Test
    void aWarmUpOfZeroRequestsIsOff() throws Exception {
        try (TestService service = TestService.start(Map.of("warm-up.requests", "0"))) {
            assertThat(service.metric("warm_up_requests_total", Map.of()), is(0.0));
        }
    }
}
