package com.example.payments;

import java.net.http.HttpResponse;
import java.util.Map;
import java.util.UUID;

import com.example.payments.http.Json;
import com.example.payments.testing.Http;

import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.is;

/** The capture and void suite on the in-memory resource store, and its bound. */
class InMemoryCaptureApiTest extends CaptureApiContract {

    @Override
    Map<String, String> backend() {
        return Map.of();
    }

    @Test
    void capturesAndVoidsCountAgainstTheInMemoryBoundLikeAuthorizations() throws Exception {
        // Two resources: one authorization and one capture; the next capture or void is 503, nothing written.
        try (TestService small = TestService.start(Map.of("authorization.in-memory.max-resources", "2"))) {
            HttpResponse<String> created = small.post("\"" + UUID.randomUUID() + "\"", Http.VALID_BODY);
            assertThat(created.body(), created.statusCode(), is(201));
            String id = Json.mapper().readTree(created.body()).get("id").asText();
            String captures = small.business("/v1/authorizations/" + id + "/captures");
            String firstKey = "\"" + UUID.randomUUID() + "\"";
            String body = "{\"amount\":{\"value\":100,\"currency\":\"EUR\"}}";
            HttpResponse<String> first = Http.post(captures, firstKey, body);
            assertThat(first.body(), first.statusCode(), is(201));

            HttpResponse<String> refused = Http.post(captures, "\"" + UUID.randomUUID() + "\"", body);
            assertThat(refused.body(), refused.statusCode(), is(503));
            assertThat(refused.headers().firstValue("Retry-After").isPresent(), is(true));
            HttpResponse<String> voided = Http.post(small.business("/v1/authorizations/" + id + "/voids"),
                                                    "\"" + UUID.randomUUID() + "\"", "{}");
            assertThat(voided.body(), voided.statusCode(), is(503));

            HttpResponse<String> replay = Http.post(captures, firstKey, body);
            assertThat("a replay is no new resource", replay.body(), is(first.body()));
            HttpResponse<String> read = small.get(small.business("/v1/authorizations/" + id));
            assertThat(read.body(), containsString("\"capturedAmount\":{\"value\":100"));
        }
    }
}
