package com.example.payments.idempotency;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;

import com.example.payments.issuer.IssuerStats;
import com.example.payments.testing.Http;
import com.example.payments.testing.IssuerSimulatorProcess;
import com.example.payments.testing.MetricsScrape;
import com.example.payments.testing.PostgresServer;
import com.example.payments.testing.RedisServer;
import com.example.payments.testing.ServiceProcess;
import com.example.payments.testing.Timeline;
import com.example.payments.testing.TestCredentials;

import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.is;

/**
 * Fault path 5, an issuer call that would start too late in the drain: clients upload their bodies slowly, so that
 * their claims come during the drain (authorizer timeout 3 s, drain 5 s). One completes its body right after the
 * signal: its call can finish before the drain deadline, and it is served. One completes it 1 s before the deadline:
 * before, its call was abandoned with an unknown outcome, the key released, and a retry elsewhere authorized again.
 * Now it is not claimed at all: 503 + {@code Retry-After} + {@code Connection: close}, the authorizer never runs, and
 * the retry on another replica authorizes it once.
 */
class DrainAwareClaimIT {

    // The refused upload keeps its body open from before the signal until 4 s into the drain, longer on busy cores:
    // the body deadline (default 10 s) must not cut it off first, which would test http.body-timeout instead.
    private static final Map<String, String> SHUTDOWN = Map.of(
            "authorizer.timeout", "PT3S", "authorizer.simulated-latency", "PT0.2S",
            "shutdown.drain-timeout", "PT5S", "shutdown.cleanup-timeout", "PT1S", "shutdown.metrics-linger", "PT3S",
            "shutdown.hard-deadline", "PT15S", "http.body-timeout", "PT60S");
    private static final String SERVED_BODY = Http.VALID_BODY.replace("order-42", "drain-served");
    private static final String REFUSED_BODY = Http.VALID_BODY.replace("order-42", "drain-refused");

    @Test
    void inMemoryAClaimThatCouldNotFinishBeforeTheDrainDeadlineIsRefusedAndOneThatCanIsServed() throws Exception {
        try (ServiceProcess service = ServiceProcess.start(SHUTDOWN)) {
            service.awaitReady(Duration.ofSeconds(20));
            drainAwareClaims(service, Timeline.create("fault-5-drain-aware-claim-in-memory"), 1.0);
        }
    }

    @Test
    void withRedisTheRefusedRequestIsAuthorizedOnceByItsRetryOnAnotherReplica() throws Exception {
        try (RedisServer redis = RedisServer.start(); PostgresServer postgres = PostgresServer.start();
                IssuerSimulatorProcess issuer = IssuerSimulatorProcess.start(Map.of(
                        "issuer.simulated-latency", "PT0.2S"))) {
            Map<String, String> config = new HashMap<>(SHUTDOWN);
            config.putAll(FaultConfigs.redis(redis, postgres, "authorizer.type", "http", "authorizer.http.uri",
                                             issuer.uri()));
            // Drain 5 s > authorizer 3 s + Redis 1.5 s; the lease (default 10 s) > the same.
            config.putAll(SHUTDOWN);
            config.remove("idempotency.in-flight-lease");
            try (ServiceProcess a = ServiceProcess.start(config); ServiceProcess b = ServiceProcess.start(config)) {
                a.awaitReady(Duration.ofSeconds(20));
                b.awaitReady(Duration.ofSeconds(20));
                Timeline timeline = Timeline.create("fault-5-drain-aware-claim-redis");
                String refusedKey = drainAwareClaims(a, timeline, 0.0);

                Answer retry = Answer.of(Http.post("http://127.0.0.1:" + b.businessPort()
                                                               + "/v1/authorizations", refusedKey, REFUSED_BODY));
                assertThat(retry.body(), retry.status(), is(201));
                assertThat(MetricsScrape.of(b.healthPort()).sum("authorizer_invocations_total"), is(1.0));
                String location = retry.location();
                assertThat(Http.get("http://127.0.0.1:" + b.businessPort() + location).body(), is(retry.body()));
                assertThat(Http.post("http://127.0.0.1:" + b.businessPort() + "/v1/authorizations", refusedKey,
                                     REFUSED_BODY).body(), is(retry.body()));
                IssuerStats stats = issuer.stats();
                assertThat("the served payment and the refused one, once each: " + stats, stats.authorizations(),
                           is(2L));
                assertThat(stats.paymentsApprovedMoreThanOnce(), is(0L));
            }
        }
    }

    /** A response, from the JDK client. */
    private record Answer(int status, String body, String location) {
        static Answer of(java.net.http.HttpResponse<String> response) {
            return new Answer(response.statusCode(), response.body(),
                                    response.headers().firstValue("Location").orElse(""));
        }
    }

    /**
     * Two slow uploads, SIGTERM, one body completed at once and one 1 s before the drain deadline.
     *
     * @param inProcessIssuer {@code issuer_authorizations_total} expected of the process: 1 with the built-in issuer
     * @return the idempotency key of the refused request
     */
    private static String drainAwareClaims(ServiceProcess service, Timeline timeline, double inProcessIssuer)
            throws Exception {
        String servedKey = UUID.randomUUID().toString();
        String refusedKey = UUID.randomUUID().toString();
        try (SlowUpload served = SlowUpload.start(service, servedKey, SERVED_BODY);
                SlowUpload refused = SlowUpload.start(service, refusedKey, REFUSED_BODY)) {
            awaitInFlight(service, 2);
            service.signal("TERM");
            timeline.signalSent("TERM");
            service.awaitLine(line -> line.contains("received: draining"), Duration.ofSeconds(10));
            long handled = System.nanoTime();
            Raw early = served.finish();
            timeline.add("served", early.head());
            // The drain began with the signal (no pre-drain delay): its deadline is 5 s after it. At 4 s, a 3 s
            // issuer call could not finish before it.
            Thread.sleep(Math.max(0, handled + Duration.ofSeconds(4).toNanos() - System.nanoTime()) / 1_000_000);
            Raw late = refused.finish();
            timeline.add("refused", late.head());
            MetricsScrape metrics = MetricsScrape.of(service.healthPort());
            int exit = service.awaitExit(Duration.ofSeconds(30));
            timeline.write(service.output());

            assertThat(early.head(), early.status(), is(201));
            assertThat(late.head() + late.body(), late.status(), is(503));
            assertThat(late.body(), containsString("draining"));
            assertThat(late.headers().containsKey("retry-after"), is(true));
            assertThat(late.headers().get("connection"), is("close"));
            assertThat("one claim, the served one", metrics.sum("idempotency_requests_total",
                                                                 Map.of("outcome", "new")), is(1.0));
            assertThat(metrics.sum("idempotency_requests_total", Map.of("outcome", "draining")), is(1.0));
            assertThat("the authorizer ran for the served request only",
                       metrics.sum("authorizer_invocations_total"), is(1.0));
            assertThat("authorizations at the issuer built into the process (none when it calls the simulator)",
                       metrics.sum("issuer_authorizations_total"), is(inProcessIssuer));
            assertThat(metrics.sum("idempotency_keys_released_total"), is(0.0));
            assertThat(exit, is(0));
        }
        return refusedKey;
    }

    private static void awaitInFlight(ServiceProcess service, double requests) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(15).toNanos();
        while (MetricsScrape.of(service.healthPort()).sum("http_in_flight_requests") < requests) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("not in flight within 15 s");
            }
            Thread.sleep(20);
        }
    }

    /** A raw response: status, headers (lower case) and body. */
    private record Raw(int status, Map<String, String> headers, String body, String head) {
    }

    /** A POST whose headers and first body bytes are sent at once, and the rest only when told. */
    private static final class SlowUpload implements AutoCloseable {
        private final Socket socket;
        private final byte[] body;

        private SlowUpload(Socket socket, String body) {
            this.socket = socket;
            this.body = body.getBytes(StandardCharsets.UTF_8);
        }

        static SlowUpload start(ServiceProcess service, String key, String body) throws IOException {
            SlowUpload upload = new SlowUpload(new Socket("127.0.0.1", service.businessPort()), body);
            upload.socket.setSoTimeout(30_000);
            OutputStream out = upload.socket.getOutputStream();
            out.write(("POST /v1/authorizations HTTP/1.1\r\nHost: 127.0.0.1\r\n" + TestCredentials.HEADER_LINE
                       + "Content-Type: application/json\r\n"
                       + "Idempotency-Key: " + key + "\r\nContent-Length: " + upload.body.length + "\r\n\r\n")
                              .getBytes(StandardCharsets.US_ASCII));
            out.write(upload.body, 0, 10);
            out.flush();
            return upload;
        }

        Raw finish() throws IOException {
            OutputStream out = socket.getOutputStream();
            out.write(body, 10, body.length - 10);
            out.flush();
            InputStream in = socket.getInputStream();
            String statusLine = line(in);
            Map<String, String> headers = new HashMap<>();
            for (String line = line(in); !line.isEmpty(); line = line(in)) {
                int colon = line.indexOf(':');
                headers.put(line.substring(0, colon).trim().toLowerCase(Locale.ROOT), line.substring(colon + 1).trim());
            }
            int length = Integer.parseInt(headers.getOrDefault("content-length", "0"));
            String text = new String(in.readNBytes(length), StandardCharsets.UTF_8);
            return new Raw(Integer.parseInt(statusLine.split(" ")[1]), headers, text, statusLine + " " + headers);
        }

        private static String line(InputStream in) throws IOException {
            ByteArrayOutputStream line = new ByteArrayOutputStream();
            for (int b = in.read(); b != '\n'; b = in.read()) {
                if (b < 0) {
                    throw new IOException("connection closed in the response head");
                }
                if (b != '\r') {
                    line.write(b);
                }
            }
            return line.toString(StandardCharsets.ISO_8859_1);
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }
}
