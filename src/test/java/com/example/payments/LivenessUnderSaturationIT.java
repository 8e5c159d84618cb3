package com.example.payments;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import com.example.payments.health.Probes;
import com.example.payments.testing.Http;
import com.example.payments.testing.ProbePoller;
import com.example.payments.testing.RawHttp;
import com.example.payments.testing.ServiceProcess;
import com.example.payments.testing.Timeline;
import com.example.payments.testing.TestCredentials;

import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.empty;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.not;

/**
 * A busy service is not killed as if it were dead. Liveness fails on the loopback prober only when
 * the business listener also makes no progress (no response written to anyone within
 * {@code health.liveness.progress-window}); saturation costs readiness, never liveness.
 */
class LivenessUnderSaturationIT {

    private static final Duration SATURATION = Duration.ofSeconds(30);
    private static final int SLOW_CLIENTS = 24;

    @Test
    void thirtySecondsOfSaturationKeepLivenessUp() throws Exception {
        Timeline timeline = Timeline.create("liveness-under-saturation");
        // 8 connection slots, 24 clients each sending its body over ~2 s: the loopback probe waits in the accept
        // queue behind them far longer than its 1 s timeout, while every slot completes a request every ~2 s.
        try (ServiceProcess service = ServiceProcess.start(Map.of("server.max-tcp-connections", "8"))) {
            service.awaitReady(Duration.ofSeconds(30));
            AtomicInteger completed = new AtomicInteger();
            List<String> failures = new CopyOnWriteArrayList<>();
            long end = System.nanoTime() + SATURATION.toNanos();
            List<Thread> clients = new java.util.ArrayList<>();
            for (int i = 0; i < SLOW_CLIENTS; i++) {
                int client = i;
                clients.add(Thread.ofPlatform().daemon(true).name("slow-" + i).start(
                        () -> slowClient(service.businessPort(), client, end, completed, failures)));
            }
            List<ProbePoller.Poll> live;
            List<ProbePoller.Poll> ready;
            try (ProbePoller liveness = ProbePoller.start(service.healthPort(), "/health/live", "live",
                                                          Duration.ofMillis(500), timeline);
                 ProbePoller readiness = ProbePoller.start(service.healthPort(), "/health/ready", "ready",
                                                           Duration.ofMillis(500), timeline)) {
                for (Thread client : clients) {
                    client.join(SATURATION.plusSeconds(30));
                }
                live = liveness.polls();
                ready = readiness.polls();
            }
            timeline.write(service.output());

            assertThat(failures, is(empty()));
            assertThat("requests completed under saturation", completed.get(), greaterThan(SLOW_CLIENTS * 5));
            assertThat("liveness polled throughout", live.size(), greaterThan(40));
            assertThat("liveness 200 throughout: " + timeline,
                       live.stream().filter(poll -> poll.status() != 200).toList(), is(empty()));
            assertThat("readiness showed the saturation: " + timeline,
                       ready.stream().filter(poll -> poll.status() == 503
                                                     && poll.body().contains(Probes.APP_SERVER_SATURATED)).toList(),
                       is(not(empty())));
            assertThat(Http.get("http://127.0.0.1:" + service.healthPort() + "/health/ready").statusCode(), is(200));
        }
    }

    @Test
    void aWedgedListenerFailsLivenessOnceNothingProgressesForTheWindow() throws Exception {
        try (TestService service = TestService.start(Map.of("health.prober.interval", "PT0.1S",
                                                            "health.prober.timeout", "PT0.5S",
                                                            "server.idle-connection-timeout", "PT1S",
                                                            "server.idle-connection-period", "PT0.5S",
                                                            "health.liveness.progress-window", "PT2S"))) {
            assertThat(service.get(service.health("/health/live")).statusCode(), is(200));
            // Nothing will complete on the business port any more.
            service.running().business().stop();
            long stopped = System.nanoTime();
            String body = null;
            while (System.nanoTime() - stopped < Duration.ofSeconds(20).toNanos()) {
                var live = service.get(service.health("/health/live"));
                if (live.statusCode() == 503) {
                    body = live.body();
                    break;
                }
                Thread.sleep(100);
            }
            assertThat("liveness 503 within 20 s", body, is(not((String) null)));
            assertThat(body, containsString(Probes.APP_SERVER_NOT_RESPONDING));
            assertThat(service.get(service.health("/health/ready")).body(),
                       containsString(Probes.APP_SERVER_NOT_RESPONDING));
            // Startup stays complete: boot finished once and for all.
            assertThat(service.get(service.health("/health/startup")).statusCode(), is(200));
        }
    }

    private static void slowClient(int port, int client, long end, AtomicInteger completed, List<String> failures) {
        byte[] body = Http.VALID_BODY.getBytes(StandardCharsets.UTF_8);
        for (int request = 0; System.nanoTime() < end; request++) {
            try (RawHttp connection = RawHttp.connect(port, null, "slow-" + client)) {
                connection.send("POST /v1/authorizations HTTP/1.1\r\nHost: x\r\n" + TestCredentials.HEADER_LINE
                                + "Content-Type: application/json\r\n"
                                + "Idempotency-Key: slow-" + client + "-" + request + "\r\nContent-Length: "
                                + body.length + "\r\n\r\n");
                int piece = body.length / 10 + 1;
                for (int from = 0; from < body.length; from += piece) {
                    Thread.sleep(200);
                    connection.send(java.util.Arrays.copyOfRange(body, from, Math.min(body.length, from + piece)));
                }
                RawHttp.Response response = connection.readResponse(false);
                if (response.status() == 201) {
                    completed.incrementAndGet();
                } else {
                    failures.add("slow-" + client + ": " + response.status() + " " + response.body());
                }
            } catch (IOException e) {
                failures.add("slow-" + client + ": " + e);
            } catch (InterruptedException e) {
                return;
            }
        }
    }
}
