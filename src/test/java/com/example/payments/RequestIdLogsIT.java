package com.example.payments;

import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;

import com.example.payments.http.Json;
import com.example.payments.testing.Http;
import com.example.payments.testing.ServiceProcess;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;

/**
 * The packaged jar, in both log formats: a request with a {@code traceparent} gets its trace id back as
 * {@code X-Request-Id}, and the log lines written while serving it carry the same id ({@code [id]} in text, a
 * {@code http.request.id} field in JSON), and so does its access log line, in the same format; lines written outside a
 * request carry none.
 */
class RequestIdLogsIT {

    private static final String TRACE_ID = "5bf92f3577b34da6a3ce929d0e0e4736";

    @ParameterizedTest
    @ValueSource(strings = {"text", "json"})
    void aTracedRequestsLogLinesCarryItsTraceId(String format) throws Exception {
        try (ServiceProcess service = ServiceProcess.start(Map.of("logging.format", format))) {
            service.awaitReady(Duration.ofSeconds(30));
            String api = "http://127.0.0.1:" + service.businessPort() + "/v1/authorizations";
            HttpResponse<String> failed = Http.client().send(Http.request(api)
                    .header("traceparent", "00-" + TRACE_ID + "-00f067aa0ba902b7-01")
                    .header("Content-Type", "application/json")
                    .header("Idempotency-Key", "logs-1")
                    .POST(HttpRequest.BodyPublishers.ofString(Http.VALID_BODY.replace("4111111111111111",
                                                                                      "4000000000000119")))
                    .build(), HttpResponse.BodyHandlers.ofString());
            assertThat(failed.statusCode(), is(502));
            assertThat(failed.headers().firstValue("X-Request-Id").orElseThrow(), is(TRACE_ID));
            HttpResponse<String> refused = Http.client().send(HttpRequest.newBuilder(URI.create(api + "/x"))
                    .header("traceparent", "00-" + TRACE_ID + "-00f067aa0ba902b8-01").GET().build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(refused.statusCode(), is(401));

            String authorizer = service.awaitLine(line -> line.contains("Authorizer authorize failed"),
                                                  Duration.ofSeconds(10));
            String authentication = service.awaitLine(line -> line.contains("Authentication failed"),
                                                      Duration.ofSeconds(10));
            String access = service.awaitLine(line -> line.contains("POST /v1/authorizations 502"),
                                              Duration.ofSeconds(10));
            assertThat(access, access.contains(TRACE_ID), is(true));
            assertThat(access, access.contains("m_123"), is(true));
            if (format.equals("json")) {
                assertThat(access, field(access, "log.logger"), is("com.example.payments.observability.AccessLog"));
                assertThat(access, field(access, "http.request.id"), is(TRACE_ID));
                assertThat(access, field(access, "merchant.id"), is("m_123"));
                assertThat(access, field(access, "http.route"), is("/v1/authorizations"));
                assertThat(access, field(access, "http.response.status_code"), is("502"));
            }
            String started = service.awaitLine(line -> line.contains("serving business traffic"),
                                               Duration.ofSeconds(10));
            if (format.equals("json")) {
                assertThat(authorizer, field(authorizer, "http.request.id"), is(TRACE_ID));
                assertThat(authentication, field(authentication, "http.request.id"), is(TRACE_ID));
                assertThat(started, Json.mapper().readTree(started).has("http.request.id"), is(false));
            } else {
                assertThat(authorizer, authorizer.matches(".*\\[" + TRACE_ID + "\\] \\S+: Authorizer authorize failed.*"),
                           is(true));
                assertThat(authentication, authentication.matches(".*\\[" + TRACE_ID + "\\] \\S+: Authentication failed.*"),
                           is(true));
                assertThat(started, started.matches(".* INFO \\[\\] com\\.example\\.payments\\.Main: payments-authorization serving.*"), is(true));
            }
        }
    }

    private static String field(String line, String name) throws Exception {
        JsonNode json = Json.mapper().readTree(line);
        return json.path(name).asText();
    }
}
