package com.example.payments;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;

import com.example.payments.testing.Http;

import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.not;

/**
 * Capacity and retention of the in-memory registry, over the wire.
 */
class IdempotencyLimitsTest {

    @Test
    void whenMaxKeysAreHeldNewKeysGetServiceUnavailableAndNothingIsEvicted() throws Exception {
        try (TestService service = TestService.start(Map.of("idempotency.max-keys", "3"))) {
            HttpResponse<String> first = service.post("k1", Http.VALID_BODY);
            assertThat(service.post("k2", Http.VALID_BODY).statusCode(), is(201));
            assertThat(service.post("k3", Http.VALID_BODY).statusCode(), is(201));
            HttpResponse<String> full = service.post("k4", Http.VALID_BODY);
            assertThat(full.statusCode(), is(503));
            assertThat(full.headers().firstValue("Retry-After").isPresent(), is(true));
            assertThat(full.headers().firstValue("Content-Type").orElseThrow(), is("application/problem+json"));
            // The oldest record is still there: a retry replays instead of authorizing again.
            HttpResponse<String> retry = service.post("k1", Http.VALID_BODY);
            assertThat(retry.statusCode(), is(201));
            assertThat(retry.body(), is(first.body()));
            assertThat(retry.headers().firstValue("Idempotent-Replayed").orElseThrow(), is("true"));
            assertThat(service.metric("idempotency_requests_total", Map.of("outcome", "rejected_full")), is(1.0));
        }
    }

    @Test
    void aFullStoreTakesTheReplicaOutOfTheEndpointsWithoutFeedingTheCircuitBreaker() throws Exception {
        try (TestService service = TestService.start(Map.of("idempotency.max-keys", "2",
                                                            "health.circuit-breaker.threshold", "3"))) {
            assertThat(service.get(service.health("/health/ready")).statusCode(), is(200));
            assertThat(service.post("k1", Http.VALID_BODY).statusCode(), is(201));
            assertThat(service.post("k2", Http.VALID_BODY).statusCode(), is(201));
            for (int i = 0; i < 5; i++) {
                HttpResponse<String> ready = service.get(service.health("/health/ready"));
                assertThat(ready.statusCode(), is(503));
                assertThat(ready.body(), is("{\"status\":\"unhealthy\",\"errors\":[\"idempotency-store: full: 2 of 2 "
                                            + "keys held (idempotency.max-keys)\"]}"));
            }
            assertThat("a restart would drop the records: never counted", service.metric(
                    "readiness_consecutive_failures", Map.of()), is(0.0));
            assertThat(service.get(service.health("/health/live")).statusCode(), is(200));
            assertThat("replays are still served", service.post("k1", Http.VALID_BODY).statusCode(), is(201));
        }
    }

    @Test
    void afterRetentionTheSweeperForgetsTheKeyAndFreesItsPlace() throws Exception {
        try (TestService service = TestService.start(Map.of("idempotency.max-keys", "1",
                                                            "idempotency.retention", "PT1S"))) {
            HttpResponse<String> first = service.post("k1", Http.VALID_BODY);
            assertThat(first.statusCode(), is(201));
            assertThat(service.post("k2", Http.VALID_BODY).statusCode(), is(503));
            String location = first.headers().firstValue("Location").orElseThrow();
            // The sweeper runs every second; give it a few rounds past the retention.
            long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            int status;
            do {
                Thread.sleep(250);
                status = service.post("k2", Http.VALID_BODY).statusCode();
            } while (status == 503 && System.nanoTime() < deadline);
            assertThat(status, is(201));
            HttpResponse<String> again = service.post("k1", Http.VALID_BODY);
            assertThat(again.headers().firstValue("Idempotent-Replayed").isPresent(), is(false));
            assertThat(again.body(), not(first.body()));
            assertThat(service.get(service.business(location)).statusCode(), is(404));
        }
    }
}
