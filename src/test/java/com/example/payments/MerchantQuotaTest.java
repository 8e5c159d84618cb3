package com.example.payments;

import java.net.http.HttpResponse;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

import com.example.payments.http.Json;
import com.example.payments.testing.Http;
import com.example.payments.testing.TestCredentials;

import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.is;

/**
 * Per-merchant quotas over the wire: a merchant over its quota gets 429 with {@code Retry-After} on new keys only,
 * while another merchant still gets 201 and its own replays are still served.
 */
class MerchantQuotaTest {

    private static final String OTHER = TestCredentials.bearer(TestCredentials.OTHER_KEY);
    private static final String OTHER_BODY = Http.VALID_BODY.replace("m_123", TestCredentials.OTHER_MERCHANT);

    private static String key() {
        return "\"" + UUID.randomUUID() + "\"";
    }

    @Test
    void aMerchantOverItsRecordsQuotaGets429WhileAnotherStillGets201() throws Exception {
        try (TestService service = TestService.start(Map.of("idempotency.merchant-quota.max-records", "2",
                                                            "idempotency.merchant-quota.max-in-flight", "2"))) {
            String url = service.business("/v1/authorizations");
            double exceeded = quota(service, "records_exceeded");
            double allowed = quota(service, "allowed");
            double rejected = service.metric("idempotency_requests_total", Map.of("outcome", "rejected_quota"));
            String first = key();
            HttpResponse<String> created = Http.post(url, first, Http.VALID_BODY);
            assertThat(created.statusCode(), is(201));
            assertThat(Http.post(url, key(), Http.VALID_BODY).statusCode(), is(201));

            HttpResponse<String> over = Http.post(url, key(), Http.VALID_BODY);
            assertThat(over.statusCode(), is(429));
            assertThat(over.headers().firstValue("Retry-After").orElseThrow(), is("60"));
            assertThat(over.headers().firstValue("Content-Type").orElseThrow(), is("application/problem+json"));
            assertThat(Json.mapper().readTree(over.body()).get("type").asText(),
                       containsString("merchant-quota-exceeded"));

            assertThat("another merchant is unaffected", Http.post(url, key(), OTHER_BODY, OTHER).statusCode(),
                       is(201));
            HttpResponse<String> replay = Http.post(url, first, Http.VALID_BODY);
            assertThat("replays are never refused", replay.statusCode(), is(201));
            assertThat(replay.body(), is(created.body()));
            assertThat(quota(service, "records_exceeded") - exceeded, is(1.0));
            assertThat(quota(service, "allowed") - allowed, is(3.0));
            assertThat(service.metric("idempotency_requests_total", Map.of("outcome", "rejected_quota")) - rejected,
                       is(1.0));
        }
    }

    @Test
    void aMerchantAtItsInFlightQuotaGets429UntilItsRequestCompletes() throws Exception {
        try (TestService service = TestService.start(Map.of("idempotency.merchant-quota.max-in-flight", "1",
                                                            "authorizer.simulated-latency", "PT2S"))) {
            String url = service.business("/v1/authorizations");
            double exceeded = quota(service, "in_flight_exceeded");
            double started = service.metric("idempotency_requests_total", Map.of("outcome", "new"));
            CompletableFuture<HttpResponse<String>> running = CompletableFuture.supplyAsync(() -> {
                try {
                    return Http.post(url, key(), Http.VALID_BODY);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            awaitInFlight(service, started);

            HttpResponse<String> over = Http.post(url, key(), Http.VALID_BODY);
            assertThat(over.statusCode(), is(429));
            assertThat(over.headers().firstValue("Retry-After").orElseThrow(), is("1"));
            assertThat("another merchant is unaffected", Http.post(url, key(), OTHER_BODY, OTHER).statusCode(),
                       is(201));
            assertThat(running.get().statusCode(), is(201));
            assertThat("its slot is free again", Http.post(url, key(), Http.VALID_BODY).statusCode(), is(201));
            assertThat(quota(service, "in_flight_exceeded") - exceeded, is(1.0));
        }
    }

    private static double quota(TestService service, String outcome) throws Exception {
        return service.metric("idempotency_quota_total", Map.of("outcome", outcome));
    }

    private static void awaitInFlight(TestService service, double newBefore) throws Exception {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (service.metric("idempotency_requests_total", Map.of("outcome", "new")) < newBefore + 1) {
            assertThat("the first request is in flight within 10 s", System.nanoTime() < deadline, is(true));
            Thread.sleep(20);
        }
    }
}
