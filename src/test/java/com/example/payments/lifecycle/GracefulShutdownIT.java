package com.example.payments.lifecycle;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import com.example.payments.http.Json;
import com.example.payments.testing.ProbePoller;
import com.example.payments.testing.ProbePoller.Poll;
import com.example.payments.testing.RawHttp;
import com.example.payments.testing.ServiceProcess;
import com.example.payments.testing.Timeline;
import com.fasterxml.jackson.databind.JsonNode;

import org.junit.jupiter.api.Test;

import static com.example.payments.lifecycle.ShutdownTests.EXIT;
import static com.example.payments.lifecycle.ShutdownTests.POLL;
import static com.example.payments.lifecycle.ShutdownTests.awaitMetric;
import static com.example.payments.lifecycle.ShutdownTests.config;
import static com.example.payments.lifecycle.ShutdownTests.finish;
import static com.example.payments.lifecycle.ShutdownTests.handledMillis;
import static com.example.payments.lifecycle.ShutdownTests.join;
import static com.example.payments.lifecycle.ShutdownTests.lineMillis;
import static com.example.payments.lifecycle.ShutdownTests.phaseMillis;
import static com.example.payments.lifecycle.ShutdownTests.postAsync;
import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.everyItem;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.greaterThanOrEqualTo;
import static org.hamcrest.Matchers.hasSize;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.lessThan;
import static org.hamcrest.Matchers.not;
import static org.hamcrest.Matchers.empty;

/**
 * SIGTERM to the running jar with five authorizations in flight: the whole shutdown choreography as a client, a
 * kubelet and a load balancer see it.
 */
class GracefulShutdownIT {

    @Test
    void inFlightAuthorizationsCompleteWhileReadinessDrainsAndLivenessStaysOk() throws Exception {
        Timeline timeline = Timeline.create("sigterm-with-five-posts-in-flight");
        Map<String, String> config = config("shutdown.pre-drain-delay", "PT1S", "shutdown.drain-timeout", "PT6S",
                                            "shutdown.cleanup-timeout", "PT1S", "shutdown.metrics-linger", "PT1S",
                                            "shutdown.hard-deadline", "PT12S", "authorizer.simulated-latency", "PT3S");
        try (ServiceProcess service = ServiceProcess.start(config)) {
            service.awaitReady(EXIT);
            List<CompletableFuture<RawHttp.Response>> posts = new ArrayList<>();
            int exit;
            List<Poll> ready;
            List<Poll> live;
            try (ProbePoller readiness = ProbePoller.start(service.healthPort(), "/health/ready", "ready", POLL,
                                                           timeline);
                 ProbePoller liveness = ProbePoller.start(service.healthPort(), "/health/live", "live", POLL,
                                                          timeline)) {
                for (int i = 1; i <= 5; i++) {
                    posts.add(postAsync(service.businessPort(), "five-in-flight-" + i, timeline, "post-" + i));
                }
                awaitMetric(service, "http_in_flight_requests", Map.of(), 5);
                service.signal("TERM");
                timeline.signalSent("TERM");
                exit = service.awaitExit(EXIT);
                Thread.sleep(3 * POLL.toMillis());
                ready = readiness.polls();
                live = liveness.polls();
            }
            finish(timeline, service);

            assertThat("exit status", exit, is(0));
            long lastPostEnd = Long.MIN_VALUE;
            for (CompletableFuture<RawHttp.Response> post : posts) {
                RawHttp.Response response = join(post);
                assertThat(response.body(), response.status(), is(201));
                JsonNode body = Json.mapper().readTree(response.body());
                assertThat(body.path("status").asText(), is("APPROVED"));
                assertThat(body.path("id").asText(), not(""));
                assertThat("answered after the signal, with the connection closed", response.connectionClose(),
                           is(true));
                lastPostEnd = Math.max(lastPostEnd, timeline.millis(response.endNanos()));
            }
            long drainStart = lineMillis(timeline, service, "Shutdown phase drain:");
            assertThat("the POSTs were still running when the drain began", lastPostEnd, greaterThan(drainStart));
            assertThat("the drain waited for them", phaseMillis(service, "drain"), greaterThan(200L));
            assertThat(lineMillis(timeline, service, "Shutdown summary"), greaterThan(drainStart));
            assertThat(String.join("\n", service.output()), containsString("requests cut off by the drain timeout: 0"));

            long handled = handledMillis(timeline, service);
            List<Poll> readyBefore = before(timeline, ready, 0);
            List<Poll> readyAfter = after(timeline, ready, handled);
            assertThat(readyBefore, not(empty()));
            assertThat("ready before the signal", readyBefore.stream().map(Poll::status).toList(), everyItem(is(200)));
            assertThat("first readiness poll once the signal was handled", readyAfter.getFirst().status(), is(503));
            assertThat(readyAfter.getFirst().body(), containsString("\"draining\":true"));
            assertThat("readiness never 200 again", readyAfter.stream().filter(p -> !p.failed())
                    .map(Poll::status).toList(), everyItem(is(503)));

            List<Poll> liveAfter = after(timeline, live, 0);
            int firstFailure = firstFailure(liveAfter);
            assertThat("liveness answered after the signal", firstFailure, greaterThan(0));
            assertThat("liveness 200 until the health listener closed", liveAfter.subList(0, firstFailure).stream()
                    .map(Poll::status).toList(), everyItem(is(200)));
            assertThat(after(timeline, live, handled).getFirst().body(), containsString("draining"));
            assertThat("no answer once the health listener closed", liveAfter.subList(firstFailure,
                    liveAfter.size()).stream().filter(p -> !p.failed()).toList(), hasSize(0));
            long lastLiveAnswer = timeline.millis(liveAfter.get(firstFailure - 1).answeredNanos());
            assertThat("the health listener answered after the last POST completed", lastLiveAnswer,
                       greaterThan(lastPostEnd));
            assertThat("it closed after the metrics linger", lineMillis(timeline, service, "Health listener closed"),
                       greaterThanOrEqualTo(lineMillis(timeline, service, "Shutdown summary") + 900));
            assertThat(lastPostEnd, lessThan(lineMillis(timeline, service, "Health listener closed")));
        }
    }

    // Answered before the moment: a poll sent just before the signal may be answered after it, and then says draining.
    static List<Poll> before(Timeline timeline, List<Poll> polls, long millis) {
        return polls.stream().filter(p -> timeline.millis(p.answeredNanos()) < millis).toList();
    }

    static List<Poll> after(Timeline timeline, List<Poll> polls, long millis) {
        return polls.stream().filter(p -> timeline.millis(p.sentNanos()) >= millis).toList();
    }

    static int firstFailure(List<Poll> polls) {
        for (int i = 0; i < polls.size(); i++) {
            if (polls.get(i).failed()) {
                return i;
            }
        }
        throw new AssertionError("the listener never stopped answering: " + polls);
    }
}
