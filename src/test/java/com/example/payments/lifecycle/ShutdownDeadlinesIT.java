package com.example.payments.lifecycle;

import java.util.Map;

import com.example.payments.testing.ServiceProcess;
import com.example.payments.testing.Timeline;

import org.junit.jupiter.api.Test;

import static com.example.payments.lifecycle.ShutdownTests.EXIT;
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

/**
 * What hangs costs a bounded time: a resource whose close never returns costs the cleanup timeout; anything that
 * hangs beyond every phase's own bound (here a JVM shutdown hook) meets the hard deadline, exit status 1.
 * Both use {@link HangingShutdownResource}, found because the child runs with {@code target/test-classes}.
 */
class ShutdownDeadlinesIT {

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
            assertThat(log, containsString("Shutdown hard deadline of 3000 ms exceeded; hung in phase exit; halting "
                                           + "with exit status 1"));
            assertThat("the story before the hang is all there", log, containsString("Shutdown summary"));
            assertThat("not before the deadline", exited, greaterThanOrEqualTo(2900L));
            assertThat(exited, lessThan(6000L));
        }
    }
}
