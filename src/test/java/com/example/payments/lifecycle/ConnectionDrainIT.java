package com.example.payments.lifecycle;

import java.io.IOException;
import java.net.ConnectException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import com.example.payments.testing.Http;
import com.example.payments.testing.RawHttp;
import com.example.payments.testing.ServiceProcess;
import com.example.payments.testing.Timeline;
import com.example.payments.testing.TestCredentials;

import org.junit.jupiter.api.Test;

import static com.example.payments.lifecycle.ShutdownTests.EXIT;
import static com.example.payments.lifecycle.ShutdownTests.config;
import static com.example.payments.lifecycle.ShutdownTests.finish;
import static com.example.payments.lifecycle.ShutdownTests.handledMillis;
import static com.example.payments.lifecycle.ShutdownTests.lineMillis;
import static com.example.payments.lifecycle.ShutdownTests.phaseMillis;
import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.everyItem;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.greaterThanOrEqualTo;
import static org.hamcrest.Matchers.hasSize;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.lessThan;
import static org.hamcrest.Matchers.not;
import static org.hamcrest.Matchers.empty;

/**
 * What keep-alive clients (and load-balancer connection pools) see at the socket level through a SIGTERM.
 */
class ConnectionDrainIT {

    private static final Duration EVERY = Duration.ofMillis(200);
    /** Around the drain's start, a request may be served, refused or reset before any byte; never half-answered. */
    private static final long SLACK_MS = 100;

    /** One attempt of the keep-alive client. */
    private record Attempt(long sentNanos, long answeredNanos, String method, int status, boolean connectionClose,
                           boolean serverClosed, String failure, int connection) {
    }

    @Test
    void aKeepAliveClientIsMovedOffDuringThePreDrainAndThenRefused() throws Exception {
        Timeline timeline = Timeline.create("keep-alive-client-through-sigterm");
        Map<String, String> config = config("shutdown.pre-drain-delay", "PT2S", "shutdown.drain-timeout", "PT3S",
                                            "shutdown.cleanup-timeout", "PT1S", "shutdown.metrics-linger", "PT1S",
                                            "shutdown.hard-deadline", "PT10S", "authorizer.timeout", "PT2S");
        try (ServiceProcess service = ServiceProcess.start(config)) {
            service.awaitReady(EXIT);
            List<Attempt> attempts = new CopyOnWriteArrayList<>();
            Thread client = Thread.ofPlatform().daemon(true).name("keep-alive")
                    .start(() -> keepAliveClient(service, timeline, attempts));
            Thread.sleep(1000);
            service.signal("TERM");
            timeline.signalSent("TERM");
            int exit = service.awaitExit(EXIT);
            Thread.sleep(3 * EVERY.toMillis());
            client.interrupt();
            client.join();
            finish(timeline, service);

            assertThat(exit, is(0));
            long drainStart = lineMillis(timeline, service, "Shutdown phase drain:");
            // Answered before kill -TERM was even sent: the service cannot have been draining yet. (A request sent just
            // before the signal may be answered after it, with Connection: close: that is the filter working.)
            List<Attempt> before = attempts.stream().filter(a -> timeline.millis(a.answeredNanos()) < 0).toList();
            long handled = handledMillis(timeline, service);
            List<Attempt> preDrain = attempts.stream().filter(a -> timeline.millis(a.sentNanos()) >= handled
                    && timeline.millis(a.sentNanos()) < drainStart - SLACK_MS).toList();
            List<Attempt> afterDrain = attempts.stream()
                    .filter(a -> timeline.millis(a.sentNanos()) > drainStart + SLACK_MS).toList();
            assertThat(before, not(empty()));
            assertThat("one connection reused before the signal",
                       before.stream().map(Attempt::connection).distinct().toList(), hasSize(1));
            assertThat(before.stream().map(Attempt::connectionClose).toList(), everyItem(is(false)));
            assertThat(preDrain.size(), greaterThanOrEqualTo(4));
            for (Attempt attempt : preDrain) {
                assertThat("served during the pre-drain: " + attempt, attempt.status(), lessThan(300));
                assertThat("Connection: close: " + attempt, attempt.connectionClose(), is(true));
                assertThat("then the server closed the socket: " + attempt, attempt.serverClosed(), is(true));
            }
            assertThat("a new connection for every pre-drain request",
                       preDrain.stream().map(Attempt::connection).distinct().toList(), hasSize(preDrain.size()));
            assertThat(afterDrain, not(empty()));
            for (Attempt attempt : afterDrain) {
                assertThat("refused once the listener closed: " + attempt, attempt.status(), is(0));
            }
            for (Attempt attempt : attempts) {
                assertThat("never a 5xx or a half answer: " + attempt, attempt.status() < 500
                        && (attempt.failure() == null || attempt.failure().startsWith("refused")
                            || attempt.failure().startsWith("no response")), is(true));
            }
        }
    }

    @Test
    void idleKeepAliveConnectionsDoNotHoldTheExitUntilTheDrainTimeout() throws Exception {
        Timeline timeline = Timeline.create("idle-keep-alive-connections");
        Map<String, String> config = config("shutdown.pre-drain-delay", "PT1S", "shutdown.drain-timeout", "PT10S",
                                            "shutdown.cleanup-timeout", "PT1S", "shutdown.hard-deadline", "PT15S");
        try (ServiceProcess service = ServiceProcess.start(config)) {
            service.awaitReady(EXIT);
            List<RawHttp> idle = new ArrayList<>();
            for (int i = 1; i <= 3; i++) {
                RawHttp connection = RawHttp.connect(service.businessPort(), timeline, "idle-" + i);
                assertThat(connection.exchange("GET", "/ping", Map.of(), null).connectionClose(), is(false));
                idle.add(connection);
            }
            service.signal("TERM");
            timeline.signalSent("TERM");
            List<Boolean> closedByServer = new ArrayList<>();
            for (RawHttp connection : idle) {
                closedByServer.add(connection.awaitServerClose(Duration.ofSeconds(5)));
                connection.close();
            }
            int exit = service.awaitExit(EXIT);
            long exited = timeline.now();
            finish(timeline, service);

            assertThat(exit, is(0));
            assertThat("the server closed every idle connection", closedByServer, everyItem(is(true)));
            long preDrainEnd = lineMillis(timeline, service, "Shutdown phase pre-drain done");
            for (int i = 1; i <= 3; i++) {
                String source = "idle-" + i;
                long closedAt = timeline.millis(timeline.last(e -> e.source().equals(source)).orElseThrow());
                assertThat("kept open through the pre-drain", closedAt, greaterThan(preDrainEnd - SLACK_MS));
            }
            assertThat("the drain did not wait for idle connections", phaseMillis(service, "drain"), lessThan(1000L));
            assertThat("exit about a second after the pre-drain, far from the 10 s drain timeout", exited,
                       lessThan(preDrainEnd + 3000));
        }
    }

    private static void keepAliveClient(ServiceProcess service, Timeline timeline, List<Attempt> attempts) {
        RawHttp connection = null;
        int connections = 0;
        for (int i = 0; !Thread.currentThread().isInterrupted(); i++) {
            long sent = System.nanoTime();
            boolean post = i % 2 == 1;
            try {
                if (connection == null) {
                    connection = RawHttp.connect(service.businessPort(), timeline, "keep-alive");
                    connections++;
                }
                RawHttp.Response response = post
                        ? connection.exchange("POST", "/v1/authorizations", Map.of("Content-Type", "application/json",
                                "Idempotency-Key", "keep-alive-" + i, "Authorization", TestCredentials.AUTHORIZATION),
                                              Http.VALID_BODY)
                        : connection.exchange("GET", "/ping", Map.of(), null);
                boolean serverClosed = false;
                if (response.connectionClose()) {
                    serverClosed = connection.awaitServerClose(Duration.ofSeconds(1));
                    connection.close();
                    connection = null;
                }
                attempts.add(new Attempt(sent, System.nanoTime(), post ? "POST" : "GET", response.status(),
                                         response.connectionClose(), serverClosed, null, connections));
            } catch (ConnectException e) {
                attempts.add(new Attempt(sent, System.nanoTime(), post ? "POST" : "GET", 0, false, false, "refused",
                                         connections));
            } catch (IOException e) {
                attempts.add(new Attempt(sent, System.nanoTime(), post ? "POST" : "GET", 0, false, false,
                                         e instanceof RawHttp.NoResponseException ? "no response: " + e.getMessage()
                                                 : "broken: " + e, connections));
                closeQuietly(connection);
                connection = null;
            }
            try {
                Thread.sleep(EVERY);
            } catch (InterruptedException e) {
                break;
            }
        }
        closeQuietly(connection);
    }

    private static void closeQuietly(RawHttp connection) {
        if (connection != null) {
            try {
                connection.close();
            } catch (IOException ignored) {
                // test client
            }
        }
    }
}
