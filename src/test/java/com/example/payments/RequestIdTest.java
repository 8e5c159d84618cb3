package com.example.payments;

import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

import com.example.payments.http.Json;
import com.example.payments.testing.Http;
import com.example.payments.testing.LogCapture;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.not;

/**
 * Request ids over the wire: {@code X-Request-Id} on every answer of both listeners (early answers of the filters and
 * of the listener itself included), the trace id of a valid {@code traceparent}, the same value as {@code requestId}
 * in every problem body, and in the log lines written while the request is served.
 */
class RequestIdTest {

    private static final String TRACE_ID = "0af7651916cd43dd8448eb211c80319c";
    private static final String TRACEPARENT = "00-" + TRACE_ID + "-b7ad6b7169203331-01";

    private static TestService service;

    @BeforeAll
    static void start() {
        service = TestService.start(Map.of());
    }

    @AfterAll
    static void stop() {
        service.close();
    }

    @Test
    void aTraceparentGivesItsTraceIdBackOnASuccess() throws Exception {
        HttpResponse<String> response = send(Http.request(service.business("/v1/authorizations"))
                .header("traceparent", TRACEPARENT)
                .header("Content-Type", "application/json")
                .header("Idempotency-Key", "request-id-1")
                .POST(HttpRequest.BodyPublishers.ofString(Http.VALID_BODY)));
        assertThat(response.statusCode(), is(201));
        assertThat(response.headers().firstValue("X-Request-Id").orElseThrow(), is(TRACE_ID));
    }

    @Test
    void withoutATraceparentEachRequestGetsAFreshId() throws Exception {
        Set<String> ids = new HashSet<>();
        for (int i = 0; i < 5; i++) {
            String id = Http.get(service.business("/ping")).headers().firstValue("X-Request-Id").orElseThrow();
            assertThat(id.matches("[0-9a-f]{32}"), is(true));
            ids.add(id);
        }
        assertThat(ids.size(), is(5));
    }

    @ParameterizedTest
    @ValueSource(strings = {"00-4111111111111111aaaaaaaaaaaaaaaa-0000000000000001-01",
            "00-a4111111111111111aaaaaaaaaaaaaaa-0000000000000001-01",
            "00-0af7651916cd43dd8448eb211c80319c-4111111111111111-01",
            "00-ff5555555555554444ffffffffffffff-b7ad6b7169203331-01",
            // a card number with a digit more beside it: a window of the run passes the Luhn check
            "00-41111111111111110af7651916cd4300-b7ad6b7169203331-01",
            "00-a41111111111111112abcdefabcdefab-b7ad6b7169203331-01"})
    void aTraceparentWhoseIdsHoldACardNumberIsNotTakenUp(String traceparent) throws Exception {
        HttpResponse<String> response = send(Http.request(service.business("/v1/authorizations/nope"))
                                                     .header("traceparent", traceparent).GET());
        assertThat(response.statusCode(), is(404));
        String id = response.headers().firstValue("X-Request-Id").orElseThrow();
        assertThat(id, traceparent.contains(id), is(false));
        assertThat(problem(response).get("requestId").asText(), is(id));
    }

    @ParameterizedTest
    @ValueSource(strings = {"garbage", "ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
            "00-00000000000000000000000000000000-b7ad6b7169203331-01", "00-4111111111111111-1111-01"})
    void anInvalidTraceparentIsIgnored(String traceparent) throws Exception {
        HttpResponse<String> response = send(Http.request(service.business("/v1/authorizations/nope"))
                                                     .header("traceparent", traceparent).GET());
        assertThat(response.statusCode(), is(404));
        String id = response.headers().firstValue("X-Request-Id").orElseThrow();
        assertThat(id.matches("[0-9a-f]{32}"), is(true));
        assertThat(id, is(not(TRACE_ID)));
        assertThat(problem(response).get("requestId").asText(), is(id));
    }

    @Test
    void everyEarlyAnswerCarriesTheIdInItsHeaderAndItsProblem() throws Exception {
        String api = service.business("/v1/authorizations");
        Map<Integer, HttpRequest.Builder> requests = Map.of(
                401, HttpRequest.newBuilder(URI.create(api + "/some-id")).GET(),
                404, Http.request(service.business("/nowhere")).GET(),
                405, Http.request(api).DELETE(),
                415, Http.request(api).header("Content-Type", "text/plain").header("Idempotency-Key", "k")
                        .POST(HttpRequest.BodyPublishers.ofString("x")),
                // Helidon answers 413 from the headers and closes: the client asks first rather than write 20 KB.
                413, Http.request(api).expectContinue(true)
                        .header("Content-Type", "application/json").header("Idempotency-Key", "k")
                        .POST(HttpRequest.BodyPublishers.ofString("{\"a\":\"" + "x".repeat(20_000) + "\"}")),
                400, Http.request(api).header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(Http.VALID_BODY)));
        for (Map.Entry<Integer, HttpRequest.Builder> request : requests.entrySet()) {
            // A connection of its own each: an early answer to a request whose body went unread closes its connection.
            HttpResponse<String> response = Http.newClient().send(request.getValue().header("traceparent", TRACEPARENT)
                    .build(), HttpResponse.BodyHandlers.ofString());
            assertThat(request.getKey() + " " + response.body(), response.statusCode(), is(request.getKey()));
            assertThat(response.headers().firstValue("X-Request-Id").orElseThrow(), is(TRACE_ID));
            assertThat(problem(response).get("requestId").asText(), is(TRACE_ID));
        }
    }

    @Test
    void theHealthListenerAnswersCarryAnIdToo() throws Exception {
        HttpResponse<String> live = Http.get(service.health("/health/live"));
        assertThat(live.headers().firstValue("X-Request-Id").orElseThrow().matches("[0-9a-f]{32}"), is(true));
        HttpResponse<String> unknown = send(HttpRequest.newBuilder(URI.create(service.health("/nowhere")))
                                                    .header("traceparent", TRACEPARENT).GET());
        assertThat(unknown.statusCode(), is(404));
        assertThat(unknown.headers().firstValue("X-Request-Id").orElseThrow(), is(TRACE_ID));
        assertThat(problem(unknown).get("requestId").asText(), is(TRACE_ID));
    }

    @Test
    void logLinesWrittenWhileServingCarryTheId() throws Exception {
        try (LogCapture logs = LogCapture.withRequestIds()) {
            // 401: logged by the authentication filter; 502: by the authorizer, on its own thread.
            send(HttpRequest.newBuilder(URI.create(service.business("/v1/authorizations/x")))
                         .header("traceparent", TRACEPARENT).GET());
            HttpResponse<String> failed = send(Http.request(service.business("/v1/authorizations"))
                    .header("traceparent", "00-1af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
                    .header("Content-Type", "application/json")
                    .header("Idempotency-Key", "request-id-502")
                    .POST(HttpRequest.BodyPublishers.ofString(Http.VALID_BODY.replace("4111111111111111",
                                                                                      "4000000000000119"))));
            assertThat(failed.statusCode(), is(502));
            String text = logs.text();
            assertThat(text, containsString("[" + TRACE_ID + "]: Authentication failed"));
            assertThat(text, containsString("[1af7651916cd43dd8448eb211c80319c]: Authorizer authorize failed"));
        }
    }

    private static HttpResponse<String> send(HttpRequest.Builder request) throws Exception {
        return Http.client().send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static JsonNode problem(HttpResponse<String> response) throws Exception {
        assertThat(response.headers().firstValue("Content-Type").orElseThrow(), is("application/problem+json"));
        return Json.mapper().readTree(response.body());
    }
}
