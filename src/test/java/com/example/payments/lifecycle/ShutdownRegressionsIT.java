package com.example.payments.lifecycle;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import com.example.payments.authorization.AuthorizationService;
import com.example.payments.testing.MetricsScrape;
import com.example.payments.testing.RawHttp;
import com.example.payments.testing.ServiceProcess;
import com.example.payments.testing.Timeline;

import org.junit.jupiter.api.Test;

import static com.example.payments.lifecycle.ShutdownTests.EXIT;
import static com.example.payments.lifecycle.ShutdownTests.awaitMetric;
import static com.example.payments.lifecycle.ShutdownTests.config;
import static com.example.payments.lifecycle.ShutdownTests.finish;
import static com.example.payments.lifecycle.ShutdownTests.join;
import static com.example.payments.lifecycle.ShutdownTests.lineMillis;
import static com.example.payments.lifecycle.ShutdownTests.phaseMillis;
import static com.example.payments.lifecycle.ShutdownTests.post;
import static com.example.payments.lifecycle.ShutdownTests.postAsync;
import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.lessThan;
import static org.hamcrest.Matchers.not;

/**
 * Regression tests for two classic shutdown bugs (a drain deadline created at startup; work in flight at the signal
 * cut off), against the running jar and a real SIGTERM.
 */
class ShutdownRegressionsIT {

    /**
     * Bug 1: the drain deadline was created at startup, so by the time the signal came it had long expired and the
     * drain ended at once with a plausible "drain deadline exceeded". Here the service runs longer than every
     * shutdown timeout (hard deadline included) before the signal, and the drain still waits for its requests.
     */
    @Test
    void drainWaitsForInFlightRequestsEvenAfterTheServiceOutlivedEveryShutdownTimeout() throws Exception {
        Timeline timeline = Timeline.create("regression-1-deadline-created-at-startup");
        Map<String, String> config = config("shutdown.pre-drain-delay", "PT0.5S", "shutdown.drain-timeout", "PT3S",
                                            "shutdown.cleanup-timeout", "PT1S", "shutdown.hard-deadline", "PT6S",
                                            "authorizer.timeout", "PT2.5S", "authorizer.simulated-latency", "PT2S");
        long launched = System.nanoTime();
        try (ServiceProcess service = ServiceProcess.start(config)) {
            service.awaitReady(EXIT);
            // Longer than pre-drain + drain + cleanup + hard deadline, all counted from the launch.
            long olderThanEveryTimeout = launched + Duration.ofSeconds(7).toNanos() - System.nanoTime();
            Thread.sleep(Duration.ofNanos(Math.max(0, olderThanEveryTimeout)));
            timeline.add("test", "service has run longer than every shutdown timeout");
            List<CompletableFuture<RawHttp.Response>> posts = new ArrayList<>();
            for (int i = 1; i <= 3; i++) {
                posts.add(postAsync(service.businessPort(), "bug-1-" + i, timeline, "post-" + i));
            }
            awaitMetric(service, "http_in_flight_requests", Map.of(), 3);
            service.signal("TERM");
            timeline.signalSent("TERM");
            int exit = service.awaitExit(EXIT);
            finish(timeline, service);

            assertThat("exit status (a hard deadline created at startup would halt with 1 at once)", exit, is(0));
            long drainStart = lineMillis(timeline, service, "Shutdown phase drain:");
            for (CompletableFuture<RawHttp.Response> post : posts) {
                RawHttp.Response response = join(post);
                assertThat(response.body(), response.status(), is(201));
                assertThat("completed inside the drain", timeline.millis(response.endNanos()), greaterThan(drainStart));
            }
            assertThat("the drain waited for the requests", phaseMillis(service, "drain"), greaterThan(300L));
            assertThat(phaseMillis(service, "drain"), lessThan(3000L));
            String log = String.join("\n", service.output());
            assertThat(log, not(containsString("Drain timeout of")));
            assertThat(log, containsString("requests cut off by the drain timeout: 0"));
        }
    }

    /**
     * Bug 2: the detached context was chosen when the work was pulled, so the work already running at the signal
     * kept the cancelled one and lost its acknowledgement, and the retry processed it a second time. Here a request
     * is inside the authorizer when SIGTERM lands: it completes, its key records the response, and a retry sent
     * during the pre-drain gets that response replayed, neither 409 nor a second authorizer call.
     */
    @Test
    void aRetryDuringThePreDrainReplaysTheRequestThatWasInTheAuthorizerAtTheSignal() throws Exception {
        Timeline timeline = Timeline.create("regression-2-work-in-flight-at-the-signal");
        // A pre-drain 4 s longer than the authorizer's 2 s: the retry, sent once the original is answered, must land
        // inside it even on a busy machine (at 3 s it once found the port closed under three parallel test runs).
        Map<String, String> config = config("shutdown.pre-drain-delay", "PT6S", "shutdown.drain-timeout", "PT3S",
                                            "shutdown.cleanup-timeout", "PT1S", "shutdown.hard-deadline", "PT15S",
                                            "authorizer.timeout", "PT2.5S", "authorizer.simulated-latency", "PT2S");
        try (ServiceProcess service = ServiceProcess.start(config)) {
            service.awaitReady(EXIT);
            CompletableFuture<RawHttp.Response> original = postAsync(service.businessPort(), "bug-2", timeline,
                                                                     "original");
            // Claimed: the next thing this request does is call the authorizer.
            awaitMetric(service, "idempotency_requests_total", Map.of("outcome", "new"), 1);
            service.signal("TERM");
            timeline.signalSent("TERM");
            RawHttp.Response first = join(original);
            RawHttp.Response retry = post(service.businessPort(), "bug-2", timeline, "retry");
            long retrySent = timeline.millis(retry.firstByteNanos());
            MetricsScrape metrics = MetricsScrape.of(service.healthPort());
            int exit = service.awaitExit(EXIT);
            finish(timeline, service);

            assertThat(first.body(), first.status(), is(201));
            assertThat("the retry was answered during the pre-drain", retrySent,
                       lessThan(lineMillis(timeline, service, "Shutdown phase pre-drain done")));
            assertThat(retry.body(), retry.status(), is(201));
            assertThat(retry.headers().get(AuthorizationService.IDEMPOTENT_REPLAYED.lowerCase()), is("true"));
            assertThat("byte-identical replay", retry.body(), is(first.body()));
            assertThat("one authorizer call for the key", metrics.sum("authorizer_invocations_total"), is(1.0));
            assertThat(metrics.sum("idempotency_requests_total", Map.of("outcome", "replayed")), is(1.0));
            assertThat(metrics.sum("idempotency_requests_total", Map.of("outcome", "in_flight")), is(0.0));
            assertThat(exit, is(0));
        }
    }
}
