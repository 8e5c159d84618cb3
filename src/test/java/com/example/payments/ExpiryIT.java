package com.example.payments;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;

import com.example.payments.http.Json;
import com.example.payments.testing.Http;
import com.example.payments.testing.MetricsScrape;
import com.example.payments.testing.PostgresServer;
import com.example.payments.testing.ServiceProcess;
import com.fasterxml.jackson.databind.JsonNode;

import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;

/**
 * Expiry against the built jar with {@code authorization.validity: PT2S}: the worker moves an uncaptured
 * authorization past its validity to {@code EXPIRED} (a void sent for the remainder), a capture after it is 409, a
 * partly captured one keeps what was captured, and the worker's heartbeat is on the health listener's metrics.
 */
class ExpiryIT {

    private static final Duration VALIDITY = Duration.ofSeconds(2);

    @Test
    void anUncapturedAuthorizationExpiresAfterItsValidityAndIsNoLongerCapturable() throws Exception {
        PostgresServer.assumeInstalled();
        try (PostgresServer postgres = PostgresServer.start();
             ServiceProcess service = ServiceProcess.start(Map.of("authorization.validity", VALIDITY.toString(),
                     "idempotency.store", "postgres", "database.url", postgres.url(), "database.username",
                     PostgresServer.USER, "idempotency.fingerprint-secret", "it-test-fingerprint-secret"))) {
            service.awaitReady(Duration.ofSeconds(30));
            String base = "http://127.0.0.1:" + service.businessPort() + "/v1/authorizations";
            String untouched = id(Http.post(base, UUID.randomUUID().toString(), Http.VALID_BODY));
            String partly = id(Http.post(base, UUID.randomUUID().toString(), Http.VALID_BODY));
            assertThat(Http.post(base + "/" + partly + "/captures", UUID.randomUUID().toString(),
                                 "{\"amount\":{\"value\":299,\"currency\":\"EUR\"}}").statusCode(), is(201));

            JsonNode expired = awaitState(base + "/" + untouched, "EXPIRED", Duration.ofSeconds(20));
            assertThat(expired.get("capturedAmount").get("value").asLong(), is(0L));
            JsonNode partlyExpired = awaitState(base + "/" + partly, "EXPIRED", Duration.ofSeconds(20));
            assertThat(partlyExpired.get("capturedAmount").get("value").asLong(), is(299L));
            HttpResponse<String> late = Http.post(base + "/" + untouched + "/captures", UUID.randomUUID().toString(),
                                                  "{\"amount\":{\"value\":100,\"currency\":\"EUR\"}}");
            assertThat(late.statusCode(), is(409));
            assertThat(MetricsScrape.of(service.healthPort()).sum("worker_heartbeat_age_seconds",
                    Map.of("worker", "authorization-expiry")) >= 0, is(true));
        }
    }

    private static String id(HttpResponse<String> created) throws Exception {
        assertThat(created.body(), created.statusCode(), is(201));
        return Json.mapper().readTree(created.body()).get("id").asText();
    }

    private static JsonNode awaitState(String url, String state, Duration timeout) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        JsonNode body;
        do {
            body = Json.mapper().readTree(Http.get(url).body());
            if (body.get("state").asText().equals(state)) {
                return body;
            }
            Thread.sleep(200);
        } while (System.nanoTime() < deadline);
        throw new AssertionError("still " + body.get("state") + " after " + timeout + ": " + body);
    }
}
