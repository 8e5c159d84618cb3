package com.example.payments.lifecycle;

import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.Map;

import com.example.payments.testing.Http;

import com.example.payments.testing.ServiceProcess;
import com.example.payments.testing.Timeline;
import com.example.payments.testing.TestCredentials;

import org.junit.jupiter.api.Test;

import static com.example.payments.lifecycle.ShutdownTests.EXIT;
import static com.example.payments.lifecycle.ShutdownTests.awaitMetric;
import static com.example.payments.lifecycle.ShutdownTests.config;
import static com.example.payments.lifecycle.ShutdownTests.finish;
import static com.example.payments.lifecycle.ShutdownTests.lineMillis;
import static com.example.payments.lifecycle.ShutdownTests.phaseMillis;
import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.greaterThanOrEqualTo;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.lessThan;
import static org.hamcrest.Matchers.startsWith;

/**
 * What hangs costs a bounded time: a request still running at the drain timeout is cut off there; a resource whose
 * close never returns costs the cleanup timeout; anything that hangs beyond every phase's own bound (here a JVM
 * shutdown hook) meets the hard deadline, exit status 1. The last two use {@link HangingShutdownResource}, found
 * because the child runs with {@code target/test-classes}.
 */
class ShutdownDeadlinesIT {

    /**
     * With a valid configuration no authorizer call outlives the drain (authorizer.timeout < drain-timeout), but a
     * client can: one that sends its headers and then trickles its body is in flight until the drain timeout, and
     * is cut off there. It never held an idempotency key (the claim comes after the body is read), so none is
     * released.
     */
    @Test
    void aRequestStillRunningAtTheDrainTimeoutIsCutOffThereAndHoldsNothingUp() throws Exception {
        Timeline timeline = Timeline.create("drain-timeout-cuts-off-a-slow-upload");
        Map<String, String> config = config("shutdown.drain-timeout", "PT1S", "authorizer.timeout", "PT0.5S",
                                            "shutdown.cleanup-timeout", "PT1S", "shutdown.hard-deadline", "PT5S");
        try (ServiceProcess service = ServiceProcess.start(config)) {
            service.awaitReady(EXIT);
            try (Socket slow = new Socket("127.0.0.1", service.businessPort())) {
                byte[] body = Http.VALID_BODY.getBytes(StandardCharsets.UTF_8);
                OutputStream out = slow.getOutputStream();
                out.write(("POST /v1/authorizations HTTP/1.1\r\nHost: 127.0.0.1\r\n" + TestCredentials.HEADER_LINE
                           + "Content-Type: application/json\r\n"
                           + "Idempotency-Key: slow-upload\r\nContent-Length: " + body.length + "\r\n\r\n")
                                  .getBytes(StandardCharsets.US_ASCII));
                out.write(body, 0, 10);
                out.flush();
                timeline.add("slow-upload", "headers and 10 of " + body.length + " body bytes sent; no more");
                awaitMetric(service, "http_in_flight_requests", Map.of(), 1);
                service.signal("TERM");
                timeline.signalSent("TERM");
                int exit = service.awaitExit(EXIT);
                String seen = whatTheClientSees(slow);
                timeline.add("slow-upload", seen);
                finish(timeline, service);

                assertThat(exit, is(0));
                assertThat("no answer, the connection closed", seen, startsWith("closed"));
                long drain = phaseMillis(service, "drain");
                assertThat("the drain waited for it up to its timeout", drain, greaterThanOrEqualTo(950L));
                assertThat("and not longer", drain, lessThan(2000L));
                String log = String.join("\n", service.output());
                assertThat(log, containsString("Drain timeout of 1000 ms reached with 1 requests still in flight"));
                assertThat(log, containsString("requests cut off by the drain timeout: 1; idempotency keys released: 0"));
            }
        }
    }

    private static String whatTheClientSees(Socket socket) throws IOException {
        socket.setSoTimeout(2000);
        try {
            byte[] response = socket.getInputStream().readAllBytes();
            return response.length == 0 ? "closed (EOF)" : "answered: " + new String(response, StandardCharsets.UTF_8);
        } catch (SocketTimeoutException e) {
            return "still open";
        } catch (IOException e) {
            return "closed (" + e.getMessage() + ")";
        }
    }

    @Test
    void aResourceWhoseCloseNeverReturnsCostsOnlyTheCleanupTimeout() throws Exception {
        Timeline timeline = Timeline.create("resource-close-hangs");
        Map<String, String> config = config(HangingShutdownResource.PROPERTY, "close",
                                            "shutdown.drain-timeout", "PT2S", "authorizer.timeout", "PT1S",
                                            "shutdown.cleanup-timeout", "PT1S", "shutdown.hard-deadline", "PT8S");
        try (ServiceProcess service = ServiceProcess.startWithTestClasses(config)) {
            service.awaitReady(EXIT);
            service.signal("TERM");
            timeline.signalSent("TERM");
            int exit = service.awaitExit(EXIT);
            long exited = timeline.now();
            finish(timeline, service);

            assertThat("the sequence went on and exited normally", exit, is(0));
            String log = String.join("\n", service.output());
            assertThat(log, containsString("Cleanup timeout of 1000 ms reached; abandoned: test-hanging-resource"));
            assertThat(log, containsString("abandoned at the cleanup timeout: test-hanging-resource"));
            assertThat("cleanup ended at its timeout", phaseMillis(service, "cleanup"), greaterThanOrEqualTo(1000L));
            assertThat(phaseMillis(service, "cleanup"), lessThan(2000L));
            assertThat("well before the hard deadline", exited, lessThan(6000L));
            assertThat(lineMillis(timeline, service, "Health listener closed"),
                       greaterThan(lineMillis(timeline, service, "Shutdown summary")));
        }
    }

    @Test
    void aShutdownHookThatNeverReturnsMeetsTheHardDeadlineWhichNamesThePhaseAndExitsOne() throws Exception {
        Timeline timeline = Timeline.create("hard-deadline");
        Map<String, String> config = config(HangingShutdownResource.PROPERTY, "exit-hook",
                                            "shutdown.drain-timeout", "PT1S", "authorizer.timeout", "PT0.5S",
                                            "shutdown.cleanup-timeout", "PT1S", "shutdown.hard-deadline", "PT3S");
        try (ServiceProcess service = ServiceProcess.startWithTestClasses(config)) {
            service.awaitReady(EXIT);
            service.signal("TERM");
            timeline.signalSent("TERM");
            int exit = service.awaitExit(EXIT);
            long exited = timeline.now();
            finish(timeline, service);

            assertThat("halted by the hard deadline", exit, is(1));
            String log = String.join("\n", service.output());
            // Stdout and stderr merged: the raw line on stderr (written first, so that it cannot be lost) or the
            // logged one satisfies this; the logged one once failed to arrive in CI, cause unknown.
            assertThat(log, containsString("Shutdown hard deadline of 3000 ms exceeded; hung in phase exit; halting "
                                           + "with exit status 1"));
            assertThat("the story before the hang is all there", log, containsString("Shutdown summary"));
            assertThat("not before the deadline", exited, greaterThanOrEqualTo(2900L));
            assertThat(exited, lessThan(6000L));
        }
    }
}
