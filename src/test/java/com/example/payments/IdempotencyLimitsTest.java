package com.example.payments;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;

import com.example.payments.authentication.Authentication;
import com.example.payments.authentication.Authenticator;
import com.example.payments.authentication.Caller;
import com.example.payments.http.Json;
import com.example.payments.testing.Http;

import io.helidon.http.HeaderNames;

import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.not;

/**
 * Capacity and retention of the in-memory registry, over the wire. One merchant may hold at most half of
 * {@code idempotency.max-keys} (checked at startup), so a full store takes several merchants: here each caller is the
 * merchant its bearer token names.
 */
class IdempotencyLimitsTest {

    private static final Authenticator MERCHANT_OF_THE_TOKEN = req -> new Authentication.Authenticated(new Caller(
            req.headers().first(HeaderNames.AUTHORIZATION).orElse("Bearer m_123").substring("Bearer ".length())));
    private static final Map<String, String> TWO_KEYS_ONE_EACH = Map.of(
            "idempotency.max-keys", "2", "idempotency.merchant-quota.max-records", "1",
            "idempotency.merchant-quota.max-in-flight", "1");

    private static TestService start(Map<String, String> overrides) {
        Map<String, String> config = new java.util.HashMap<>(TWO_KEYS_ONE_EACH);
        config.putAll(overrides);
        return TestService.start(config, MERCHANT_OF_THE_TOKEN);
    }

    private static boolean sleep() throws InterruptedException {
        Thread.sleep(250);
        return true;
    }

    private static String type(HttpResponse<String> problem) throws Exception {
        return Json.mapper().readTree(problem.body()).get("type").asText();
    }

    private static HttpResponse<String> post(TestService service, String merchant, String key) throws Exception {
        return Http.post(service.business("/v1/authorizations"), key, Http.VALID_BODY.replace("m_123", merchant),
                         "Bearer " + merchant);
    }

    @Test
    void whenMaxKeysAreHeldNewKeysGetServiceUnavailableAndNothingIsEvicted() throws Exception {
        try (TestService service = start(Map.of())) {
            HttpResponse<String> first = post(service, "m_123", "k1");
            assertThat(post(service, "m_456", "k2").statusCode(), is(201));
            HttpResponse<String> full = post(service, "m_789", "k3");
            assertThat(full.statusCode(), is(503));
            assertThat(full.headers().firstValue("Retry-After").isPresent(), is(true));
            assertThat(full.headers().firstValue("Content-Type").orElseThrow(), is("application/problem+json"));
            assertThat(type(full), is("https://payments.example.com/problems/idempotency-capacity"));
            // The oldest record is still there: a retry replays instead of authorizing again.
            HttpResponse<String> retry = post(service, "m_123", "k1");
            assertThat(retry.statusCode(), is(201));
            assertThat(retry.body(), is(first.body()));
            assertThat(retry.headers().firstValue("Idempotent-Replayed").orElseThrow(), is("true"));
            assertThat(service.metric("idempotency_requests_total", Map.of("outcome", "rejected_full")), is(1.0));
        }
    }

    @Test
    void aFullResourceStoreAnswersStoreFullNotTheRegistrysCapacity() throws Exception {
        // The registry has room; the resource store's bound (which its key bindings share) is what is reached.
        try (TestService service = TestService.start(Map.of("authorization.in-memory.max-resources", "2"))) {
            assertThat(service.post("\"k1\"", Http.VALID_BODY).statusCode(), is(201));
            assertThat(service.post("\"k2\"", Http.VALID_BODY).statusCode(), is(201));
            HttpResponse<String> full = service.post("\"k3\"", Http.VALID_BODY);
            assertThat(full.body(), full.statusCode(), is(503));
            assertThat(full.headers().firstValue("Retry-After").isPresent(), is(true));
            assertThat(type(full), is("https://payments.example.com/problems/store-full"));
            assertThat("a replay is no new resource", service.post("\"k1\"", Http.VALID_BODY).statusCode(), is(201));
        }
    }

    @Test
    void aFullStoreTakesTheReplicaOutOfTheEndpointsWithoutFeedingTheCircuitBreaker() throws Exception {
        try (TestService service = start(Map.of("health.circuit-breaker.threshold", "3"))) {
            assertThat(service.get(service.health("/health/ready")).statusCode(), is(200));
            assertThat(post(service, "m_123", "k1").statusCode(), is(201));
            assertThat(post(service, "m_456", "k2").statusCode(), is(201));
            for (int i = 0; i < 5; i++) {
                HttpResponse<String> ready = service.get(service.health("/health/ready"));
                assertThat(ready.statusCode(), is(503));
                assertThat(ready.body(), is("{\"status\":\"unhealthy\",\"errors\":[\"idempotency-store: full: 2 of 2 "
                                            + "keys held (idempotency.max-keys)\"]}"));
            }
            assertThat("a restart would drop the records: never counted", service.metric(
                    "readiness_consecutive_failures", Map.of()), is(0.0));
            assertThat(service.get(service.health("/health/live")).statusCode(), is(200));
            assertThat("replays are still served", post(service, "m_123", "k1").statusCode(), is(201));
        }
    }

    @Test
    void afterRetentionTheSweeperForgetsTheKeyAndFreesItsPlace() throws Exception {
        try (TestService service = start(Map.of("idempotency.retention", "PT1S"))) {
            HttpResponse<String> first = post(service, "m_123", "k1");
            assertThat(first.statusCode(), is(201));
            assertThat(post(service, "m_456", "k2").statusCode(), is(201));
            assertThat(post(service, "m_789", "k3").statusCode(), is(503));
            String location = first.headers().firstValue("Location").orElseThrow();
            // The sweeper runs every second; give it a few rounds past the retention.
            long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            int status;
            do {
                Thread.sleep(250);
                status = post(service, "m_789", "k3").statusCode();
            } while (status == 503 && System.nanoTime() < deadline);
            assertThat(status, is(201));
            // Retention bounds replays only: the authorization stays readable (the resource store keeps it), and its
            // key stays bound to its request in the system of record, so another request under it is refused (422)
            // instead of becoming a second payment, although the registry forgot the key.
            assertThat(Http.get(service.business(location), "Bearer m_123").statusCode(), is(200));
            HttpResponse<String> again = Http.post(service.business("/v1/authorizations"), "k1",
                                                   Http.VALID_BODY.replace("order-42", "order-43"), "Bearer m_123");
            assertThat(again.body(), again.statusCode(), is(422));
        }
    }
}
