package com.example.payments;

import java.time.Duration;
import java.util.Map;
import java.util.stream.Stream;

import com.example.payments.testing.Http;
import com.example.payments.testing.RawHttp;
import com.example.payments.testing.ServiceProcess;
import com.example.payments.testing.TestCredentials;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;

/**
 * A client that sends {@code Connection: close} gets the header back and the server closes the
 * connection after the response (RFC 9112 section 9.6), on both listeners, for GET, HEAD and POST, for errors too,
 * in and out of shutdown. Without the header, the connection stays open.
 */
class ClientConnectionCloseIT {

    private static ServiceProcess service;

    @BeforeAll
    static void start() throws Exception {
        service = ServiceProcess.start(Map.of());
        service.awaitReady(Duration.ofSeconds(30));
    }

    @AfterAll
    static void stop() {
        service.close();
    }

    static Stream<Arguments> requests() {
        return Stream.of(
                // port, method, path, body, status
                Arguments.of("business", "GET", "/ping", null, 200),
                Arguments.of("business", "HEAD", "/ping", null, 200),
                Arguments.of("business", "POST", "/v1/authorizations", Http.VALID_BODY, 201),
                Arguments.of("business", "POST", "/v1/authorizations", "{\"merchantId\":", 400),
                Arguments.of("business", "GET", "/v1/authorizations/unknown", null, 404),
                Arguments.of("business", "POST", "/ping", "", 405),
                Arguments.of("health", "GET", "/health/live", null, 200),
                Arguments.of("health", "HEAD", "/health/ready", null, 200),
                Arguments.of("health", "GET", "/metrics", null, 200),
                Arguments.of("health", "GET", "/nope", null, 404),
                Arguments.of("health", "POST", "/health/live", "", 405));
    }

    @ParameterizedTest(name = "{0}: {1} {2} -> {4}")
    @MethodSource("requests")
    void theServerClosesAfterTheResponseWhenTheClientAsks(String port, String method, String path, String body,
                                                          int status) throws Exception {
        try (RawHttp connection = RawHttp.connect(port(service, port), null, method + " " + path)) {
            RawHttp.Response response = connection.exchange(method, path, headers(true), body);
            assertThat(response.status(), is(status));
            assertThat(response.connectionClose(), is(true));
            assertThat("closed by the server", connection.awaitServerClose(Duration.ofSeconds(5)), is(true));
        }
    }

    @ParameterizedTest(name = "{0}: {1} {2} -> {4}")
    @MethodSource("requests")
    void withoutTheHeaderTheConnectionIsKept(String port, String method, String path, String body, int status)
            throws Exception {
        try (RawHttp connection = RawHttp.connect(port(service, port), null, method + " " + path)) {
            RawHttp.Response response = connection.exchange(method, path, headers(false), body);
            assertThat(response.status(), is(status));
            assertThat(response.connectionClose(), is(false));
            assertThat(connection.exchange("GET", port.equals("business") ? "/ping" : "/health/live", Map.of(), null)
                               .status(), is(200));
        }
    }

    @Test
    void duringShutdownBothListenersStillCloseWhenAsked() throws Exception {
        try (ServiceProcess draining = ServiceProcess.start(Map.of("shutdown.pre-drain-delay", "PT4S"))) {
            draining.awaitReady(Duration.ofSeconds(30));
            draining.signal("TERM");
            draining.awaitLine(line -> line.contains("SIGTERM received"), Duration.ofSeconds(10));
            for (String port : new String[] {"business", "health"}) {
                String path = port.equals("business") ? "/ping" : "/health/ready";
                try (RawHttp connection = RawHttp.connect(port(draining, port), null, port)) {
                    RawHttp.Response response = connection.exchange("GET", path, headers(true), null);
                    assertThat(response.status(), is(port.equals("business") ? 200 : 503));
                    assertThat(response.connectionClose(), is(true));
                    assertThat(port + " closed", connection.awaitServerClose(Duration.ofSeconds(5)), is(true));
                }
            }
            // The health listener is not draining: a probe without the header keeps its connection.
            try (RawHttp connection = RawHttp.connect(draining.healthPort(), null, "health-keep-alive")) {
                assertThat(connection.exchange("GET", "/health/live", Map.of(), null).connectionClose(), is(false));
                assertThat(connection.exchange("GET", "/health/live", Map.of(), null).status(), is(200));
            }
            assertThat(draining.awaitExit(Duration.ofSeconds(30)), is(0));
        }
    }

    private static Map<String, String> headers(boolean close) {
        Map<String, String> headers = new java.util.LinkedHashMap<>(Map.of("Content-Type", "application/json",
                                                                            "Idempotency-Key",
                                                                            "close-" + System.nanoTime(),
                                                                            "Authorization",
                                                                            TestCredentials.AUTHORIZATION));
        if (close) {
            headers.put("Connection", "close");
        }
        return headers;
    }

    private static int port(ServiceProcess process, String port) {
        return port.equals("business") ? process.businessPort() : process.healthPort();
    }
}
