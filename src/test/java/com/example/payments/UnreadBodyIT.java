package com.example.payments;

import java.io.IOException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Stream;

import com.example.payments.health.HealthState;
import com.example.payments.http.ConnectionCloseFilter;
import com.example.payments.testing.Http;
import com.example.payments.testing.RawHttp;
import com.example.payments.testing.ServiceProcess;
import com.example.payments.testing.TestCredentials;

import io.helidon.webserver.WebServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;

/**
 * An answer given before the request body was read to its end closes the connection, so the
 * unread bytes (which a client may still send after an {@code Expect: 100-continue} that was never answered) are
 * never parsed as a second request. The body used throughout is 31 bytes that are themselves a complete
 * {@code GET /ping}: if it were ever served, a {@code pong} would come back.
 */
class UnreadBodyIT {

    /** Exactly 31 bytes, and a complete request. */
    private static final String SMUGGLED = "GET /ping HTTP/1.1\r\nHost: x\r\n\r\n";
    private static final String JSON = "Content-Type: application/json\r\n";
    private static final String EXPECT = "Expect: 100-continue\r\n";
    private static final String LENGTH = "Content-Length: " + SMUGGLED.length() + "\r\n";
    private static final String AUTH = "Authorization: " + TestCredentials.AUTHORIZATION + "\r\n";
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

    static Stream<Arguments> earlyAnswers() {
        return Stream.of(
                // port, request head, whether the client waits for 100 Continue, expected early answer
                Arguments.of("business", "POST /v1/authorizations", AUTH + "Content-Type: text/plain\r\n" + EXPECT
                                                                    + LENGTH, true, 415),
                Arguments.of("business", "POST /v1/authorizations", AUTH + "Content-Type: text/plain\r\n" + LENGTH,
                             false, 415),
                // No or wrong credentials: 401 before the body is looked at.
                Arguments.of("business", "POST /v1/authorizations", JSON + EXPECT + LENGTH, true, 401),
                Arguments.of("business", "POST /v1/authorizations", "Authorization: Bearer not-a-key\r\n" + JSON
                                                                    + LENGTH, false, 401),
                Arguments.of("business", "POST /nope", AUTH + JSON + EXPECT + LENGTH, true, 404),
                Arguments.of("business", "POST /ping", JSON + EXPECT + LENGTH, true, 405),
                Arguments.of("business", "PUT /v1/authorizations/some-id", JSON + LENGTH, false, 405),
                Arguments.of("business", "FOO /ping", EXPECT + LENGTH, true, 501),
                Arguments.of("business", "POST /v1/authorizations", JSON + EXPECT + "Content-Length: 17000\r\n", true,
                             413),
                Arguments.of("health", "GET /health/live", EXPECT + LENGTH, true, 413),
                Arguments.of("health", "POST /health/live", LENGTH, false, 413));
    }

    @ParameterizedTest(name = "{0}: {1} -> {4}")
    @MethodSource
    void earlyAnswers(String port, String request, String headers, boolean awaitContinue, int status)
            throws Exception {
        try (RawHttp connection = RawHttp.connect(port.equals("business") ? service.businessPort()
                                                          : service.healthPort(), null, request)) {
            String head = request + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" + headers + "\r\n";
            RawHttp.Response response;
            if (awaitContinue) {
                connection.send(head);
                response = connection.readResponse(false);
                connection.sendQuietly(SMUGGLED);
            } else {
                connection.send(head + SMUGGLED);
                response = connection.readResponse(false);
            }
            assertThat(response.status(), is(status));
            assertThat(response.connectionClose(), is(true));
            assertNothingMoreThenClosed(connection);
        }
    }

    @Test
    void aChunkedBodyOverTheLimitIsAnsweredAndItsRestNeverParsed() throws Exception {
        try (RawHttp connection = RawHttp.connect(service.businessPort(), null, "chunked-413")) {
            connection.send("POST /v1/authorizations HTTP/1.1\r\nHost: 127.0.0.1\r\n" + AUTH + JSON
                            + "Idempotency-Key: k\r\n"
                            + "Transfer-Encoding: chunked\r\n\r\n4400\r\n");
            connection.sendQuietly("a".repeat(0x4400) + "\r\n" + Integer.toHexString(SMUGGLED.length()) + "\r\n"
                                   + SMUGGLED + "\r\n0\r\n\r\n" + SMUGGLED);
            RawHttp.Response response = connection.readResponse(false);
            assertThat(response.status(), is(413));
            assertThat(response.connectionClose(), is(true));
            assertNothingMoreThenClosed(connection);
        }
    }

    @Test
    void aChunkedBodyTheHandlerNeverReadsClosesTheConnection() throws Exception {
        try (RawHttp connection = RawHttp.connect(service.healthPort(), null, "chunked-get")) {
            connection.send("GET /health/live HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n");
            RawHttp.Response response = connection.readResponse(false);
            connection.sendQuietly(Integer.toHexString(SMUGGLED.length()) + "\r\n" + SMUGGLED + "\r\n0\r\n\r\n");
            assertThat(response.status(), is(200));
            assertThat(response.connectionClose(), is(true));
            assertNothingMoreThenClosed(connection);
        }
    }

    @Test
    void aBodyReadToItsEndKeepsTheConnectionAndIsNeverARequest() throws Exception {
        // 400 for the missing key comes after the body was read (413 precedes 400): the 31 bytes were
        // the body, 100 Continue asked for them, and the connection stays usable.
        try (RawHttp connection = RawHttp.connect(service.businessPort(), null, "read-body")) {
            connection.send("POST /v1/authorizations HTTP/1.1\r\nHost: 127.0.0.1\r\n" + AUTH + JSON + EXPECT + LENGTH
                            + "\r\n");
            RawHttp.Response interim = connection.readResponse(false);
            assertThat(interim.status(), is(100));
            connection.send(SMUGGLED);
            RawHttp.Response response = connection.readResponse(false);
            assertThat(response.status(), is(400));
            assertThat(response.connectionClose(), is(false));
            assertThat("no pong", connection.silentFor(Duration.ofMillis(500)), is(true));
            assertThat(connection.exchange("GET", "/ping", Map.of(), null).body(), is("pong"));
        }
    }

    @Test
    void loadSheddingClosesTheConnection() throws Exception {
        try (ServiceProcess shedding = ServiceProcess.start(Map.of("server.max-concurrent-requests", "1",
                                                                   "authorizer.simulated-latency", "PT3S"))) {
            shedding.awaitReady(Duration.ofSeconds(30));
            String base = "http://127.0.0.1:" + shedding.businessPort();
            CompletableFuture<Integer> slow = CompletableFuture.supplyAsync(() -> {
                try {
                    return Http.post(base + "/v1/authorizations", "slow", Http.VALID_BODY).statusCode();
                } catch (IOException | InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            });
            awaitReadiness(shedding, 503);
            try (RawHttp connection = RawHttp.connect(shedding.businessPort(), null, "shed")) {
                connection.send("POST /v1/authorizations HTTP/1.1\r\nHost: 127.0.0.1\r\n" + JSON + EXPECT + LENGTH
                                + "\r\n");
                RawHttp.Response response = connection.readResponse(false);
                connection.sendQuietly(SMUGGLED);
                assertThat(response.status(), is(503));
                assertThat(response.headers().get("retry-after"), is("1"));
                assertThat(response.connectionClose(), is(true));
                assertNothingMoreThenClosed(connection);
            }
            assertThat(slow.get(), is(201));
        }
    }

    @Test
    void theStartupGateClosesTheConnection() throws Exception {
        // Startup completes within a second in the jar; a listener whose state never starts shows the gate's answer.
        HealthState neverStarted = new HealthState();
        WebServer server = WebServer.builder()
                .port(0)
                .featuresDiscoverServices(false)
                .shutdownHook(false)
                .routing(routing -> routing.addFilter(ConnectionCloseFilter.create(neverStarted::draining))
                        .addFilter(neverStarted.startupGate())
                        .get("/ping", (req, res) -> res.send("pong"))
                        .post("/v1/authorizations", (req, res) -> res.send(req.content().as(String.class))))
                .build()
                .start();
        try (RawHttp connection = RawHttp.connect(server.port(), null, "starting")) {
            connection.send("POST /v1/authorizations HTTP/1.1\r\nHost: 127.0.0.1\r\n" + JSON + EXPECT + LENGTH
                            + "\r\n");
            RawHttp.Response response = connection.readResponse(false);
            connection.sendQuietly(SMUGGLED);
            assertThat(response.status(), is(503));
            assertThat(response.connectionClose(), is(true));
            assertNothingMoreThenClosed(connection);
        } finally {
            server.stop();
        }
    }

    // While the one permit is held, the loopback probe is shed too and readiness says so.
    private static void awaitReadiness(ServiceProcess process, int status) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (Http.get("http://127.0.0.1:" + process.healthPort() + "/health/ready").statusCode() != status) {
            assertThat("readiness " + status + " within 10 s", System.nanoTime() < deadline, is(true));
            Thread.sleep(50);
        }
    }

    private static void assertNothingMoreThenClosed(RawHttp connection) throws IOException {
        // awaitServerClose fails on any byte after the answer: a pong would be the smuggled request served.
        assertThat("closed, nothing served after the answer", connection.awaitServerClose(Duration.ofSeconds(5)),
                   is(true));
    }

}
