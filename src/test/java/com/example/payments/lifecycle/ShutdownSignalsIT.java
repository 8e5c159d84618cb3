package com.example.payments.lifecycle;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import com.example.payments.testing.ProbePoller;
import com.example.payments.testing.ProbePoller.Poll;
import com.example.payments.testing.ServiceProcess;
import com.example.payments.testing.Timeline;

import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import static com.example.payments.lifecycle.ShutdownTests.EXIT;
import static com.example.payments.lifecycle.ShutdownTests.POLL;
import static com.example.payments.lifecycle.ShutdownTests.config;
import static com.example.payments.lifecycle.ShutdownTests.finish;
import static com.example.payments.lifecycle.ShutdownTests.lineMillis;
import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.everyItem;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.hasSize;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.lessThan;
import static org.hamcrest.Matchers.not;
import static org.hamcrest.Matchers.empty;

/**
 * Which signals start the sequence, what a second one does, and the load tests' naive contender
 * ({@code NaiveShutdownMain}, test code) they compare it with.
 */
class ShutdownSignalsIT {

    private static final String SEQUENCE_FIRST_LINE = "received: draining, readiness answers 503";

    @Test
    void sigintRunsTheSameSequenceAsSigterm() throws Exception {
        Timeline timeline = Timeline.create("sigint");
        try (ServiceProcess service = ServiceProcess.start(config("shutdown.pre-drain-delay", "PT0.5S"))) {
            service.awaitReady(EXIT);
            boolean ignored = service.output().stream().anyMatch(line -> line.contains("SIGINT was ignored"));
            if (ignored) {
                String why = "SIGINT is ignored by the process that started the tests (a background job of a "
                             + "non-interactive shell), and the child inherits that; run mvn in the foreground";
                Assertions.assertFalse("true".equals(System.getenv("CI")), why);
                Assumptions.abort(why);
            }
            service.signal("INT");
            timeline.signalSent("INT");
            int exit = service.awaitExit(EXIT);
            finish(timeline, service);

            assertThat(exit, is(0));
            assertThat(lineMillis(timeline, service, "SIGINT " + SEQUENCE_FIRST_LINE),
                       lessThan(lineMillis(timeline, service, "Shutdown summary")));
            assertThat(lineMillis(timeline, service, "Shutdown summary"),
                       lessThan(lineMillis(timeline, service, "Health listener closed; exiting with status 0")));
        }
    }

    @Test
    void aSecondSigtermDuringTheSequenceIsLoggedAndChangesNothing() throws Exception {
        Timeline timeline = Timeline.create("second-sigterm");
        Map<String, String> config = config("shutdown.pre-drain-delay", "PT2S", "shutdown.drain-timeout", "PT2S",
                                            "authorizer.timeout", "PT1S", "shutdown.metrics-linger", "PT0.5S");
        try (ServiceProcess service = ServiceProcess.start(config)) {
            service.awaitReady(EXIT);
            service.signal("TERM");
            timeline.signalSent("TERM");
            // Handled before the next one is sent: two pending SIGTERMs would merge into one.
            service.awaitLine(line -> line.contains(SEQUENCE_FIRST_LINE), Duration.ofSeconds(5));
            Thread.sleep(200);
            service.signal("TERM");
            timeline.add("test", "kill -TERM (second)");
            service.signal("INT");
            timeline.add("test", "kill -INT (third)");
            int exit = service.awaitExit(EXIT);
            finish(timeline, service);

            assertThat(exit, is(0));
            List<String> log = service.output();
            assertThat(log.stream().filter(line -> line.contains(SEQUENCE_FIRST_LINE)).toList(), hasSize(1));
            assertThat(log.stream().filter(line -> line.contains("SIGTERM received during the shutdown sequence "
                                                                 + "(phase pre-drain); ignored")).toList(), hasSize(1));
            for (String phase : List.of("pre-drain", "drain", "key-release", "cleanup")) {
                assertThat(phase, log.stream().filter(line -> line.contains("Shutdown phase " + phase + " done"))
                        .toList(), hasSize(1));
            }
            assertThat(log.stream().filter(line -> line.contains("Shutdown summary")).toList(), hasSize(1));
            assertThat("the pre-drain ran its full time", ShutdownTests.phaseMillis(service, "pre-drain"),
                       greaterThan(1900L));
        }
    }

    @Test
    void theNaiveContenderStopsAtOnceWithoutFlippingReadiness() throws Exception {
        Timeline timeline = Timeline.create("naive-contender");
        Map<String, String> config = config("shutdown.pre-drain-delay", "PT5S", "shutdown.hard-deadline", "PT20S");
        try (ServiceProcess service = ServiceProcess.startNaive(config)) {
            service.awaitReady(EXIT);
            List<Poll> ready;
            int exit;
            long exited;
            try (ProbePoller readiness = ProbePoller.start(service.healthPort(), "/health/ready", "ready", POLL,
                                                           timeline)) {
                Thread.sleep(3 * POLL.toMillis());
                service.signal("TERM");
                timeline.signalSent("TERM");
                exit = service.awaitExit(EXIT);
                exited = timeline.now();
                Thread.sleep(3 * POLL.toMillis());
                ready = readiness.polls();
            }
            finish(timeline, service);

            assertThat(exit, is(0));
            assertThat("no pre-drain: gone well before the 5 s delay", exited, lessThan(3000L));
            assertThat(String.join("\n", service.output()), containsString("received: naive shutdown"));
            assertThat(String.join("\n", service.output()), not(containsString("Shutdown summary")));
            assertThat("readiness answered 200 until the listener vanished", ready.stream()
                    .filter(p -> !p.failed()).map(Poll::status).toList(), everyItem(is(200)));
            assertThat(ready.stream().filter(Poll::failed).toList(), not(empty()));
        }
    }
}
