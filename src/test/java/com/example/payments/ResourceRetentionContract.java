package com.example.payments;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;

import com.example.payments.http.Json;
import com.example.payments.testing.Http;
import com.fasterxml.jackson.databind.JsonNode;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;

/**
 * An authorization is a resource of the system of record: {@code GET} reads its current state long after the
 * idempotency registry forgot its key ({@code idempotency.retention: PT2S} here), and the key stays bound to its
 * request. One suite, run on every backend by a subclass: {@code InMemoryResourceRetentionTest},
 * {@code PostgresResourceRetentionTest} (also across a restart), {@code RedisResourceRetentionTest} (Redis in front
 * of PostgreSQL).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class ResourceRetentionContract {

    static final String RETENTION = "PT2S";
    static final long PAST_RETENTION_MS = 2_500;

    private Map<String, String> config;
    private TestService service;

    /**
     * The backend's configuration; may start the servers it needs.
     *
     * @return config overrides
     * @throws Exception when a server does not start
     */
    abstract Map<String, String> backend() throws Exception;

    /** Stops what {@link #backend()} started. */
    void stopBackend() {
    }

    @BeforeAll
    void start() throws Exception {
        config = new HashMap<>(backend());
        config.put("idempotency.retention", RETENTION);
        service = TestService.start(config);
    }

    @AfterAll
    void stop() {
        if (service != null) {
            service.close();
        }
        stopBackend();
    }

    /** @return the configuration of the running service, for another one on the same backend */
    Map<String, String> config() {
        return config;
    }

    /** @return the running service */
    TestService service() {
        return service;
    }

    static String key() {
        return "\"" + UUID.randomUUID() + "\"";
    }

    @Test
    void anAuthorizationIsReadWithItsStateAfterTheIdempotencyRetentionHasPassed() throws Exception {
        HttpResponse<String> created = service.post(key(), Http.VALID_BODY);
        assertThat(created.statusCode(), is(201));
        JsonNode body = Json.mapper().readTree(created.body());
        assertThat(body.get("state").asText(), is("APPROVED"));
        assertThat(body.get("capturedAmount").get("value").asLong(), is(0L));
        assertThat(body.get("captures").size(), is(0));
        assertThat(body.get("updatedAt").asText(), is(body.get("createdAt").asText()));
        Thread.sleep(PAST_RETENTION_MS);
        String location = service.business(created.headers().firstValue("Location").orElseThrow());
        HttpResponse<String> read = service.get(location);
        assertThat(read.statusCode(), is(200));
        assertThat("nothing changed: GET shows the bytes of the 201", read.body(), is(created.body()));
        HttpResponse<String> head = Http.client().send(Http.request(location)
                .method("HEAD", HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(head.statusCode(), is(200));
    }

    @Test
    void afterTheRetentionTheSameRequestIsTheSameAuthorizationAndAnotherOneUnderItsKeyIsRefused() throws Exception {
        String key = key();
        HttpResponse<String> created = service.post(key, Http.VALID_BODY);
        Thread.sleep(PAST_RETENTION_MS);
        HttpResponse<String> again = service.post(key, Http.VALID_BODY);
        assertThat(again.statusCode(), is(201));
        assertThat(again.body(), is(created.body()));
        HttpResponse<String> other = service.post(key, Http.VALID_BODY.replace("4111111111111111",
                                                                               "5555555555554444"));
        assertThat(other.statusCode(), is(422));
    }
}
