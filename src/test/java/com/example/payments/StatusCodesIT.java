package com.example.payments;

import java.io.IOException;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.stream.Stream;

import com.example.payments.http.Json;
import com.example.payments.testing.Http;
import com.example.payments.testing.RawHttp;
import com.example.payments.testing.ServiceProcess;
import com.example.payments.testing.TestCredentials;
import com.fasterxml.jackson.databind.JsonNode;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.not;
import static org.hamcrest.Matchers.startsWith;

/**
 * Every answer about the request itself, on both listeners of the packaged jar, over raw sockets.
 * Walks the status-code table of docs/hostile-clients.md: HEAD gets GET's status and headers without a body, a known
 * path with a method it does not serve 405 with {@code Allow}, an unknown method 501, too large a body, request line
 * or header section 413 / 414 / 431, an HTTP version not served 505; every error a problem, closing the connection
 * where the request could not be read to its end.
 */
class StatusCodesIT {

    private static final String HOST = "Host: 127.0.0.1\r\n";
    private static final String AUTHORIZATION = "Authorization: " + TestCredentials.AUTHORIZATION + "\r\n";
    private static final String BIG_HEADER = "X-Padding: " + "a".repeat(20_000) + "\r\n";
    private static final String LONG_TARGET = "/" + "a".repeat(5000);
    private static ServiceProcess service;
    private static String authorization;

    /** Which listener a row goes to. */
    enum Port { BUSINESS, HEALTH }

    @BeforeAll
    static void start() throws Exception {
        service = ServiceProcess.start(Map.of());
        service.awaitReady(Duration.ofSeconds(30));
        HttpResponse<String> created = Http.post("http://127.0.0.1:" + service.businessPort() + "/v1/authorizations",
                                                 "status-codes", Http.VALID_BODY);
        authorization = created.headers().firstValue("Location").orElseThrow();
    }

    @AfterAll
    static void stop() {
        service.close();
    }

    static Stream<Arguments> table() {
        return Stream.of(
                // HEAD: GET's status and headers, no body
                row(Port.BUSINESS, "HEAD /ping", 200, Map.of("content-length", "4"), false),
                row(Port.BUSINESS, "HEAD {authorization}", 200, Map.of("cache-control", "no-store"), false),
                row(Port.BUSINESS, "HEAD /v1/authorizations/unknown", 404, Map.of(), false),
                row(Port.HEALTH, "HEAD /health/live", 200, Map.of("cache-control", "no-store"), false),
                row(Port.HEALTH, "HEAD /health/ready", 200, Map.of("cache-control", "no-store"), false),
                row(Port.HEALTH, "HEAD /health/startup", 200, Map.of("cache-control", "no-store"), false),
                row(Port.HEALTH, "HEAD /health", 200, Map.of("cache-control", "no-store"), false),
                row(Port.HEALTH, "HEAD /metrics", 200, Map.of("content-type", "text/plain"), false),
                // no credentials on the business listener: 401 with the challenge (RFC 9110 section 11.6.1); /ping and
                // the health listener need none
                anonymous(Port.BUSINESS, "HEAD {authorization}", 401, Map.of("www-authenticate",
                        "Bearer realm=\"payments-authorization\"")),
                anonymous(Port.BUSINESS, "GET /v1/authorizations/unknown", 401, Map.of("www-authenticate",
                        "Bearer realm=\"payments-authorization\"")),
                anonymous(Port.BUSINESS, "POST /v1/authorizations", 401, Map.of("www-authenticate",
                        "Bearer realm=\"payments-authorization\"")),
                anonymous(Port.BUSINESS, "GET /nope", 401, Map.of()),
                anonymous(Port.BUSINESS, "GET /ping", 200, Map.of()),
                anonymous(Port.HEALTH, "GET /health/ready", 200, Map.of()),
                // a known path, a method it does not serve: 405 with Allow
                row(Port.BUSINESS, "HEAD /v1/authorizations", 405, Map.of("allow", "POST"), false),
                row(Port.BUSINESS, "GET /v1/authorizations", 405, Map.of("allow", "POST"), false),
                row(Port.BUSINESS, "POST /ping", 405, Map.of("allow", "GET, HEAD"), false),
                row(Port.BUSINESS, "PUT /v1/authorizations", 405, Map.of("allow", "POST"), false),
                row(Port.BUSINESS, "DELETE /v1/authorizations/some-id", 405, Map.of("allow", "GET, HEAD"), false),
                row(Port.BUSINESS, "OPTIONS /ping", 405, Map.of("allow", "GET, HEAD"), false),
                row(Port.BUSINESS, "TRACE /ping", 405, Map.of("allow", "GET, HEAD"), false),
                row(Port.HEALTH, "POST /health/live", 405, Map.of("allow", "GET, HEAD"), false),
                row(Port.HEALTH, "DELETE /health", 405, Map.of("allow", "GET, HEAD"), false),
                row(Port.HEALTH, "OPTIONS /metrics", 405, Map.of("allow", "GET, HEAD"), false),
                // a method nobody here recognizes: 501
                row(Port.BUSINESS, "FOO /ping", 501, Map.of(), false),
                row(Port.HEALTH, "FOO /health/live", 501, Map.of(), false),
                // a path nobody serves, with any method a listener knows: 404
                row(Port.BUSINESS, "GET /nope", 404, Map.of(), false),
                row(Port.HEALTH, "GET /nope", 404, Map.of(), false),
                row(Port.HEALTH, "POST /v1/authorizations", 404, Map.of(), false),
                // too large: body 413, request line 414, header section 431; the connection is closed
                raw(Port.BUSINESS, "POST /v1/authorizations HTTP/1.1\r\n" + HOST + "Content-Type: application/json\r\n"
                                   + "Expect: 100-continue\r\nContent-Length: 17000\r\n\r\n", 413),
                raw(Port.HEALTH, "GET /health/live HTTP/1.1\r\n" + HOST + "Expect: 100-continue\r\n"
                                 + "Content-Length: 10\r\n\r\n", 413),
                raw(Port.BUSINESS, "GET " + LONG_TARGET + " HTTP/1.1\r\n" + HOST + "\r\n", 414),
                raw(Port.HEALTH, "GET " + LONG_TARGET + " HTTP/1.1\r\n" + HOST + "\r\n", 414),
                raw(Port.BUSINESS, "GET /ping HTTP/1.1\r\n" + HOST + BIG_HEADER + "\r\n", 431),
                raw(Port.HEALTH, "GET /health/live HTTP/1.1\r\n" + HOST + BIG_HEADER + "\r\n", 431),
                // an HTTP version not served: 505
                raw(Port.BUSINESS, "GET /ping HTTP/1.0\r\n\r\n", 505),
                raw(Port.BUSINESS, "GET /ping HTTP/2.0\r\n" + HOST + "\r\n", 505),
                raw(Port.HEALTH, "GET /health/live HTTP/1.0\r\n\r\n", 505),
                // a content coding: not decoded, 415 with Accept-Encoding (RFC 9110 sections 15.5.16 and 12.5.3),
                // before routing like an over-size body, so with or without credentials
                raw(Port.BUSINESS, "POST /v1/authorizations HTTP/1.1\r\n" + HOST + "Content-Type: application/json\r\n"
                                   + "Content-Encoding: gzip\r\nContent-Length: 2\r\n\r\n{}", 415,
                    Map.of("connection", "close", "accept-encoding", "identity")),
                raw(Port.BUSINESS, "POST /v1/authorizations HTTP/1.1\r\n" + HOST + AUTHORIZATION
                                   + "Content-Type: application/json\r\nContent-Encoding: identity\r\n"
                                   + "Content-Length: 2\r\n\r\n{}", 415,
                    Map.of("connection", "close", "accept-encoding", "identity")),
                // a transfer coding not implemented: 501 (RFC 9112 section 6.1)
                raw(Port.BUSINESS, "POST /v1/authorizations HTTP/1.1\r\n" + HOST + AUTHORIZATION
                                   + "Content-Type: application/json\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n",
                    501));
    }

    // With the development key on the business listener, as a client of the API sends it.
    private static Arguments row(Port port, String request, int status, Map<String, String> headers,
                                 boolean closes) {
        return row(port, request, port == Port.BUSINESS ? AUTHORIZATION : "", status, headers, closes);
    }

    // Without credentials.
    private static Arguments anonymous(Port port, String request, int status, Map<String, String> headers) {
        return row(port, request + " (no credentials)", "", status, headers, false);
    }

    private static Arguments row(Port port, String name, String credentials, int status, Map<String, String> headers,
                                 boolean closes) {
        String request = name.replace(" (no credentials)", "");
        String[] parts = request.split(" ", 2);
        String text = request + " HTTP/1.1\r\n" + HOST + credentials + (parts[0].equals("POST") || parts[0].equals("PUT")
                ? "Content-Length: 0\r\n" : "") + "\r\n";
        return Arguments.of(port, name, text, parts[0].equals("HEAD"), status, headers, closes);
    }

    private static Arguments raw(Port port, String request, int status) {
        return raw(port, request, status, Map.of("connection", "close"));
    }

    private static Arguments raw(Port port, String request, int status, Map<String, String> headers) {
        String name = request.substring(0, Math.min(request.indexOf('\r'), 40)) + " (" + request.length() + " bytes)";
        return Arguments.of(port, name, request, false, status, headers, true);
    }

    @ParameterizedTest(name = "{0} {1} -> {4}")
    @MethodSource("table")
    void eachRequestGetsItsStatusAndTheHeadersTheRfcRequires(Port port, String name, String request, boolean head,
                                                             int status, Map<String, String> headers, boolean closes)
            throws Exception {
        try (RawHttp connection = RawHttp.connect(port(port), null, name)) {
            connection.send(request.replace("{authorization}", authorization));
            RawHttp.Response response = connection.readResponse(head);
            assertThat(name, response.status(), is(status));
            headers.forEach((header, value) -> assertThat(name + " " + header, response.headers().get(header),
                                                          is(value)));
            if (status >= 400) {
                assertThat(name, response.headers().get("content-type"), is("application/problem+json"));
                if (!head) {
                    JsonNode problem = Json.mapper().readTree(response.body());
                    assertThat(name, problem.path("status").asInt(), is(status));
                    assertThat(name, problem.path("type").asText(), startsWith("https://"));
                }
            }
            if (head) {
                // No body on the wire: the next bytes would be read as the answer to the next request.
                assertThat(name + ": nothing after the header section", connection.silentFor(Duration.ofMillis(300)),
                           is(true));
                assertSameAsGet(port, request.replace("{authorization}", authorization), response);
            }
            if (closes) {
                assertThat(name + ": closed after the answer", connection.awaitServerClose(Duration.ofSeconds(5)),
                           is(true));
            } else {
                assertThat(name + ": kept open", response.connectionClose(), is(false));
            }
        }
    }

    @Test
    void readinessAnswersHeadWith503WhileDraining() throws Exception {
        Map<String, String> config = new HashMap<>(Map.of("shutdown.pre-drain-delay", "PT4S",
                                                          "shutdown.hard-deadline", "PT30S"));
        try (ServiceProcess draining = ServiceProcess.start(config)) {
            draining.awaitReady(Duration.ofSeconds(30));
            draining.signal("TERM");
            draining.awaitLine(line -> line.contains("SIGTERM received"), Duration.ofSeconds(10));
            try (RawHttp connection = RawHttp.connect(draining.healthPort(), null, "head-ready")) {
                connection.send("HEAD /health/ready HTTP/1.1\r\n" + HOST + "\r\n");
                RawHttp.Response head = connection.readResponse(true);
                assertThat(head.status(), is(503));
                assertThat(connection.silentFor(Duration.ofMillis(300)), is(true));
                connection.send("GET /health/ready HTTP/1.1\r\n" + HOST + "\r\n");
                RawHttp.Response get = connection.readResponse(false);
                assertThat(get.status(), is(503));
                assertThat(get.body(), is("{\"status\":\"draining\",\"draining\":true}"));
                assertThat(head.headers().get("content-length"), is(get.headers().get("content-length")));
                assertThat(head.headers().get("content-type"), is(get.headers().get("content-type")));
            }
            assertThat(draining.awaitExit(Duration.ofSeconds(30)), is(0));
        }
    }

    private static void assertSameAsGet(Port port, String headRequest, RawHttp.Response head) throws IOException {
        try (RawHttp connection = RawHttp.connect(port(port), null, "get")) {
            connection.send(headRequest.replaceFirst("^HEAD ", "GET "));
            RawHttp.Response get = connection.readResponse(false);
            assertThat(head.status(), is(get.status()));
            for (String header : get.headers().keySet()) {
                if (header.equals("x-request-id")) {
                    continue; // each request has its own
                }
                if (header.equals("date") || header.equals("content-length") && headRequest.contains("/metrics")) {
                    continue; // the exposition changes between two scrapes
                }
                assertThat("HEAD " + header, head.headers().get(header), is(get.headers().get(header)));
            }
            assertThat(get.body(), not(is("")));
        }
    }

    private static int port(Port port) {
        return port == Port.BUSINESS ? service.businessPort() : service.healthPort();
    }
}
