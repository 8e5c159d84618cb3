package com.example.payments.lifecycle;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import com.example.payments.testing.RawHttp;
import com.example.payments.testing.ServiceProcess;
import com.example.payments.testing.Timeline;

import org.junit.jupiter.api.Test;

import static com.example.payments.lifecycle.ShutdownTests.EXIT;
import static com.example.payments.lifecycle.ShutdownTests.awaitMetric;
import static com.example.payments.lifecycle.ShutdownTests.config;
import static com.example.payments.lifecycle.ShutdownTests.finish;
import static com.example.payments.lifecycle.ShutdownTests.join;
import static com.example.payments.lifecycle.ShutdownTests.phaseMillis;
import static com.example.payments.lifecycle.ShutdownTests.postAsync;
import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.lessThan;
import static org.hamcrest.Matchers.not;

/**
 * The drain waits on the requests in flight, not on connections whose client has not finished
 * sending a request. A real SIGTERM to the packaged jar while one connection holds an incomplete header section, one
 * an incomplete request line and one is idle: the drain ends with the request in flight, far below its timeout, and
 * the log says what it waited for without blaming a cut-off request.
 */
class DrainHalfSentRequestsIT {

    @Test
    void halfSentRequestsDoNotHoldTheDrain() throws Exception {
        Timeline timeline = Timeline.create("drain-half-sent-requests");
        // Header deadline far above the drain: only the drain can end those connections here.
        Map<String, String> config = config("shutdown.drain-timeout", "PT10S", "shutdown.hard-deadline", "PT20S",
                                            "http.header-timeout", "PT60S", "authorizer.simulated-latency", "PT1S");
        try (ServiceProcess service = ServiceProcess.start(config);
             RawHttp headers = RawHttp.connect(awaitReady(service).businessPort(), timeline, "half-headers");
             RawHttp requestLine = RawHttp.connect(service.businessPort(), timeline, "half-request-line");
             RawHttp idle = RawHttp.connect(service.businessPort(), timeline, "idle")) {
            headers.send("POST /v1/authorizations HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n");
            requestLine.send("GET /pi");
            assertThat(idle.exchange("GET", "/ping", Map.of(), null).status(), is(200));
            CompletableFuture<RawHttp.Response> inFlight = postAsync(service.businessPort(), "drain-in-flight",
                                                                     timeline, "in-flight");
            awaitMetric(service, "http_in_flight_requests", Map.of(), 1);

            service.signal("TERM");
            timeline.signalSent("TERM");
            int exit = service.awaitExit(EXIT);
            finish(timeline, service);

            assertThat(exit, is(0));
            assertThat("the request in flight finished", join(inFlight).status(), is(201));
            for (RawHttp connection : new RawHttp[] {headers, requestLine, idle}) {
                assertThat("closed by the server", connection.awaitServerClose(Duration.ofSeconds(1)), is(true));
            }
            // 1 s of simulated issuer latency in flight; the drain timeout is 10 s.
            assertThat(phaseMillis(service, "drain"), lessThan(5000L));
            String log = String.join("\n", service.output());
            assertThat(log, containsString("1 requests in flight, drain timeout 10000 ms; 1 connections still "
                                           + "sending a request head closed, not waited for"));
            assertThat(log, containsString("Drain: waited "));
            assertThat(log, containsString("for 1 requests in flight at its start"));
            assertThat(log, not(containsString("Drain timeout of")));
            assertThat(log, containsString("requests cut off by the drain timeout: 0"));
        }
    }

    @Test
    void withNothingInFlightAHalfSentRequestCostsTheDrainNothing() throws Exception {
        Timeline timeline = Timeline.create("drain-only-half-sent");
        Map<String, String> config = config("shutdown.drain-timeout", "PT10S", "shutdown.hard-deadline", "PT20S",
                                            "http.header-timeout", "PT60S");
        try (ServiceProcess service = ServiceProcess.start(config);
             RawHttp headers = RawHttp.connect(awaitReady(service).businessPort(), timeline, "half-headers")) {
            headers.send("GET /ping HTTP/1.1\r\nHost: 127.0.0.1\r\n");
            Thread.sleep(200);
            service.signal("TERM");
            timeline.signalSent("TERM");
            int exit = service.awaitExit(EXIT);
            finish(timeline, service);

            assertThat(exit, is(0));
            assertThat(headers.awaitServerClose(Duration.ofSeconds(1)), is(true));
            assertThat(phaseMillis(service, "drain"), lessThan(2000L));
            String log = String.join("\n", service.output());
            assertThat(log, containsString("0 requests in flight, drain timeout 10000 ms; 1 connections still "
                                           + "sending a request head closed, not waited for"));
            assertThat(log, not(containsString("Drain timeout of")));
            assertThat(log, containsString("requests cut off by the drain timeout: 0"));
        }
    }

    private static ServiceProcess awaitReady(ServiceProcess service) throws Exception {
        service.awaitReady(Duration.ofSeconds(30));
        return service;
    }
}
