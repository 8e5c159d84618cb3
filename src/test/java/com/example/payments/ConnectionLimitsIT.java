package com.example.payments;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import com.example.payments.health.Probes;
import com.example.payments.testing.Http;
import com.example.payments.testing.MetricsScrape;
import com.example.payments.testing.RawHttp;
import com.example.payments.testing.ServiceProcess;
import com.example.payments.testing.TestCredentials;

import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.everyItem;
import static org.hamcrest.Matchers.greaterThanOrEqualTo;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.not;

/**
 * Connections are bounded. Per-listener caps below the file descriptor limit keep a flood from
 * killing a listener (Helidon 4.5 stops accepting for good when {@code accept} runs out of descriptors); the health
 * listener answers while the business listener is flooded; idle connections are reaped and the listener accepts
 * again; a client trickling its request line, header section or body is disconnected; two slow bodies holding every
 * concurrency permit cost readiness and only for the body deadline.
 */
class ConnectionLimitsIT {

    private static final Duration RECOVERY = Duration.ofSeconds(30);

    @Test
    void aFloodBeyondTheCapUnderALowFileLimitLeavesBothListenersServing() throws Exception {
        // 400 descriptors for the whole JVM; 450 connections would exhaust them without the caps. The cap leaves room
        // for what the JVM holds at startup (about 125 descriptors, its jars included), which the service checks.
        Map<String, String> config = Map.of("server.max-tcp-connections", "120",
                                            "health-server.max-tcp-connections", "16",
                                            "server.idle-connection-timeout", "PT2S",
                                            "server.idle-connection-period", "PT1S",
                                            "health.liveness.progress-window", "PT60S");
        List<Socket> flood = new ArrayList<>();
        try (ServiceProcess service = ServiceProcess.startWithFileLimit(config, 400)) {
            service.awaitReady(Duration.ofSeconds(30));
            for (int i = 0; i < 450; i++) {
                Socket socket = new Socket();
                socket.connect(new InetSocketAddress("127.0.0.1", service.businessPort()), 5000);
                flood.add(socket);
            }
            List<Integer> liveness = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                liveness.add(Http.get("http://127.0.0.1:" + service.healthPort() + "/health/live").statusCode());
                Thread.sleep(200);
            }
            assertThat("the health listener answers while the business one is flooded", liveness, everyItem(is(200)));
            // The flood stays open: idle connections are closed after idle-connection-timeout, the queued ones are
            // accepted and closed in turn, and then the listener serves again.
            assertThat(pingWithin(service, RECOVERY), is(200));
            closeAll(flood);
            assertThat(pingWithin(service, RECOVERY), is(200));
            assertThat(Http.get("http://127.0.0.1:" + service.healthPort() + "/health/live").statusCode(), is(200));
            assertThat(service.alive(), is(true));
            assertThat(String.join("\n", service.output()), not(containsString("Too many open files")));
        } finally {
            closeAll(flood);
        }
    }

    @Test
    void connectionCapsThatDoNotFitTheFileLimitStopStartup() throws Exception {
        ServiceProcess.Exited exited = ServiceProcess.runToExit(Map.of("server.port", "0", "health-server.port", "0"),
                                                                Map.of(), 256);
        assertThat(exited.status(), is(2));
        assertThat(String.join("\n", exited.output()), containsString(
                "Invalid configuration: server.max-tcp-connections: '1000' is out of range; allowed: an integer from "
                + "1 to "));
        assertThat(String.join("\n", exited.output()), containsString("the file descriptor limit (ulimit -n) is 256"));
    }

    @Test
    void clientsTricklingARequestAreDisconnectedAtTheirDeadline() throws Exception {
        Map<String, String> config = Map.of("http.header-timeout", "PT1S", "http.body-timeout", "PT2S",
                                            "server.idle-connection-timeout", "PT2S",
                                            "server.idle-connection-period", "PT1S",
                                            "health.liveness.progress-window", "PT10S");
        try (ServiceProcess service = ServiceProcess.start(config)) {
            service.awaitReady(Duration.ofSeconds(30));
            int port = service.businessPort();
            assertThat("request line, one byte every 300 ms",
                       trickle(port, "", "GET /ping-with-a-very-long-path-indeed HTTP/1.1\r\n"), is("closed"));
            assertThat("header section, one byte every 300 ms",
                       trickle(port, "GET /ping HTTP/1.1\r\n", "X-Slow: " + "a".repeat(200)), is("closed"));
            assertThat("body, one byte every 300 ms", trickle(port,
                    "POST /v1/authorizations HTTP/1.1\r\nHost: x\r\n" + TestCredentials.HEADER_LINE
                    + "Content-Type: application/json\r\n"
                    + "Idempotency-Key: slow-body\r\nContent-Length: 300\r\n\r\n", " ".repeat(300)), is("closed"));
            try (RawHttp stalled = RawHttp.connect(port, null, "stalled-body")) {
                stalled.send("POST /v1/authorizations HTTP/1.1\r\nHost: x\r\n" + TestCredentials.HEADER_LINE
                             + "Content-Type: application/json\r\n"
                             + "Idempotency-Key: stalled-body\r\nContent-Length: 300\r\n\r\n{");
                assertThat("a stalled body", stalled.awaitServerClose(Duration.ofSeconds(10)), is(true));
            }
            assertThat(MetricsScrape.of(service.healthPort()).sum("http_server_request_duration_seconds_count",
                                                                  Map.of("status", "408")), greaterThanOrEqualTo(2.0));
            assertThat(pingWithin(service, RECOVERY), is(200));
        }
    }

    @Test
    void twoSlowBodiesAtTheConcurrencyLimitCostReadinessForTheBodyDeadlineOnly() throws Exception {
        Map<String, String> config = Map.of("server.max-concurrent-requests", "2", "http.body-timeout", "PT3S");
        try (ServiceProcess service = ServiceProcess.start(config);
             RawHttp slow1 = RawHttp.connect(awaitReady(service).businessPort(), null, "slow-1");
             RawHttp slow2 = RawHttp.connect(service.businessPort(), null, "slow-2")) {
            String base = "http://127.0.0.1:" + service.businessPort();
            for (RawHttp slow : List.of(slow1, slow2)) {
                slow.send("POST /v1/authorizations HTTP/1.1\r\nHost: x\r\n" + TestCredentials.HEADER_LINE
                          + "Content-Type: application/json\r\n"
                          + "Idempotency-Key: slow-" + System.nanoTime() + "\r\nContent-Length: 300\r\n\r\n{");
            }
            String ready = awaitReadiness(service, 503);
            assertThat(ready, containsString(Probes.APP_SERVER_SATURATED));
            HttpResponse<String> shed = Http.post(base + "/v1/authorizations", "shed", Http.VALID_BODY);
            if (shed.statusCode() == 503) {
                assertThat(shed.headers().firstValue("Retry-After").orElseThrow(), is("1"));
            }
            assertThat("saturated, not dead",
                       Http.get("http://127.0.0.1:" + service.healthPort() + "/health/live").statusCode(), is(200));
            // The body deadline frees both permits: the listener serves and readiness recovers.
            assertThat(slow1.awaitServerClose(Duration.ofSeconds(10)), is(true));
            assertThat(slow2.awaitServerClose(Duration.ofSeconds(10)), is(true));
            // A permit is released once its request is done with, the access log line included: a moment after the
            // socket closes. A 503 meanwhile takes no key, so the same request is sent again.
            int status = 0;
            for (long end = System.nanoTime() + Duration.ofSeconds(2).toNanos(); System.nanoTime() < end; ) {
                status = Http.post(base + "/v1/authorizations", "after-the-slow-ones", Http.VALID_BODY).statusCode();
                if (status != 503) {
                    break;
                }
                Thread.sleep(50);
            }
            assertThat(status, is(201));
            awaitReadiness(service, 200);
        }
    }

    private static ServiceProcess awaitReady(ServiceProcess service) throws Exception {
        service.awaitReady(Duration.ofSeconds(30));
        return service;
    }

    private static String awaitReadiness(ServiceProcess service, int status) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(15).toNanos();
        while (true) {
            HttpResponse<String> response = Http.get("http://127.0.0.1:" + service.healthPort() + "/health/ready");
            if (response.statusCode() == status) {
                return response.body();
            }
            assertThat("readiness " + status + " within 15 s, last " + response.body(), System.nanoTime() < deadline,
                       is(true));
            Thread.sleep(50);
        }
    }

    private static int pingWithin(ServiceProcess service, Duration timeout) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        IOException last = null;
        while (System.nanoTime() < deadline) {
            try (RawHttp connection = RawHttp.connect(service.businessPort(), null, "ping")) {
                return connection.exchange("GET", "/ping", Map.of("Connection", "close"), null).status();
            } catch (IOException e) {
                last = e;
                Thread.sleep(200);
            }
        }
        throw new AssertionError("/ping did not answer within " + timeout, last);
    }

    /**
     * Sends a prefix, then one byte of the rest every 300 ms, until the server closes the connection or 15 s pass.
     *
     * @return {@code closed}, {@code answered: ...} or {@code still open}
     */
    private static String trickle(int port, String prefix, String rest) throws Exception {
        try (Socket socket = new Socket("127.0.0.1", port)) {
            socket.setSoTimeout(300);
            socket.getOutputStream().write(prefix.getBytes(StandardCharsets.US_ASCII));
            long deadline = System.nanoTime() + Duration.ofSeconds(15).toNanos();
            for (int i = 0; System.nanoTime() < deadline; i = (i + 1) % rest.length()) {
                try {
                    socket.getOutputStream().write(rest.charAt(i));
                    int first = socket.getInputStream().read();
                    if (first < 0) {
                        return "closed";
                    }
                    return "answered: " + (char) first + new String(socket.getInputStream().readNBytes(
                            socket.getInputStream().available()), StandardCharsets.ISO_8859_1);
                } catch (java.net.SocketTimeoutException e) {
                    // still open: keep trickling
                } catch (IOException e) {
                    return "closed";
                }
            }
            return "still open";
        }
    }

    private static void closeAll(List<Socket> sockets) {
        for (Socket socket : sockets) {
            try {
                socket.close();
            } catch (IOException ignored) {
                // test cleanup
            }
        }
    }
}
