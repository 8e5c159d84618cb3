package com.example.payments.idempotency;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.example.payments.issuer.IssuerStats;
import com.example.payments.testing.IssuerSimulatorProcess;
import com.example.payments.testing.MetricsScrape;
import com.example.payments.testing.PostgresServer;
import com.example.payments.testing.RedisServer;
import com.example.payments.testing.ServiceProcess;
import com.example.payments.testing.Timeline;

import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.isOneOf;

/**
 * Fault path 4, a key cut off by the drain: SIGTERM while an authorization is in the issuer call, then the process is
 * frozen past its drain deadline, so that on waking the drain cuts the request off while Helidon interrupts its
 * thread. Before, the release ran on the interrupted thread, the Redis call failed ("Command interrupted") and the
 * key-release phase no longer knew the key: the retry elsewhere got 409 for a whole lease. Now store writes never run
 * on the request thread, a key stays held until its release succeeded, whatever is held at key-release is released
 * there, and the summary counts every release: the retry on another replica is answered at once.
 */
class DrainCutOffIT {

    private static final Pattern RELEASED = Pattern.compile("idempotency keys released: (\\d+)");

    @Test
    void withRedisTheRetryOnAnotherReplicaRightAfterTheExitIsAnsweredNotLockedOutForALease() throws Exception {
        Timeline timeline = Timeline.create("fault-4-drain-cut-off-redis");
        try (RedisServer redis = RedisServer.start(); PostgresServer postgres = PostgresServer.start();
                IssuerSimulatorProcess issuer = IssuerSimulatorProcess.start(Map.of(
                        "issuer.simulated-latency", "PT1.4S"))) {
            // Drain 4.5 s > authorizer 2.5 s + Redis 1.5 s; the lease (7 s) outlasts the freeze (5.5 s), so the key is
            // still held when the process wakes past its drain deadline. Both replicas call one shared issuer. The
            // retry's own issuer call (1.4 s) ends 1.1 s inside the authorizer timeout, also on a loaded machine.
            Map<String, String> config = FaultConfigs.redis(redis, postgres, "authorizer.type", "http",
                    "authorizer.http.uri", issuer.uri(), "authorizer.timeout", "PT2.5S",
                    "idempotency.in-flight-lease", "PT7S", "shutdown.drain-timeout", "PT4.5S", "shutdown.cleanup-timeout", "PT1S",
                    "shutdown.metrics-linger", "PT3S", "shutdown.hard-deadline", "PT15S");
            try (ServiceProcess a = ServiceProcess.start(config); ServiceProcess b = ServiceProcess.start(config)) {
                a.awaitReady(Duration.ofSeconds(20));
                b.awaitReady(Duration.ofSeconds(20));
                OneKeyClient client = new OneKeyClient(timeline);
                var original = client.sendAsync(a, "original-on-a");
                double decidedOnA = cutOffByTheDrain(a, timeline, Duration.ofMillis(5500)).decided();
                OneKeyClient.Answer first = original.join();

                OneKeyClient.Answer retry = client.send(b, "retry-on-b");
                timeline.write(a.output());
                assertThat("the retry elsewhere is answered, not locked out for the lease: " + retry,
                           retry.status(), is(201));
                assertThat("the cut-off request never answers 500", first.status(), isOneOf(0, 201, 504));
                client.assertOneAuthorization(List.of(b));
                client.assertOneRecordIn(redis);
                assertThat("the authorizer decided once", decidedOnA + OneKeyClient.decided(List.of(b)), is(1.0));
                IssuerStats stats = issuer.stats();
                assertThat("one authorization at the issuer: " + stats, stats.authorizations(), is(1L));
                assertThat(stats.paymentsApprovedMoreThanOnce(), is(0L));
            }
        }
    }

    @Test
    void inMemoryEveryReleaseOfACutOffKeyIsCountedWhoeverMadeIt() throws Exception {
        Timeline timeline = Timeline.create("fault-4-drain-cut-off-in-memory");
        // The lease (3 s) outlasts the freeze (2.2 s), which outlasts the drain (1.5 s).
        Map<String, String> config = FaultConfigs.inMemory("authorizer.simulated-latency", "PT0.9S",
                "idempotency.in-flight-lease", "PT3S", "shutdown.drain-timeout", "PT1.5S", "shutdown.cleanup-timeout",
                "PT1S", "shutdown.metrics-linger", "PT3S", "shutdown.hard-deadline", "PT12S");
        try (ServiceProcess a = ServiceProcess.start(config)) {
            a.awaitReady(Duration.ofSeconds(20));
            OneKeyClient client = new OneKeyClient(timeline);
            var original = client.sendAsync(a, "original");
            Shutdown shutdown = cutOffByTheDrain(a, timeline, Duration.ofMillis(2200));
            OneKeyClient.Answer first = original.join();
            timeline.write(a.output());
            assertThat("the cut-off request never answers 500", first.status(), isOneOf(0, 201, 504));
            assertThat("at most one authorization at the issuer", shutdown.issuerAuthorizations() <= 1, is(true));
            assertThat("the authorizer decided at most once", shutdown.decided() <= 1, is(true));
            assertThat("a 201 only for a decision", first.status() != 201 || shutdown.decided() == 1, is(true));
            // Whether the authorizer decided is told by the process, not by the client: on waking, the issuer call
            // may end just before the drain cuts the request off, and its decision is recorded while the answer is
            // lost with the closing listener (the client sees no response).
            if (shutdown.decided() == 1) {
                assertThat("a decided key is never released", shutdown.released(), is(0.0));
            } else {
                assertThat("an undecided key is released, by the request or by key-release", shutdown.released(),
                           is(1.0));
            }
        }
    }

    /**
     * What a shutdown did.
     *
     * @param decided              decisions the authorizer made
     * @param released             keys released
     * @param issuerAuthorizations authorizations of the issuer built into the process
     */
    private record Shutdown(double decided, double released, double issuerAuthorizations) {
    }

    /**
     * SIGTERM with the request in the issuer call, then a freeze past the drain deadline; checks, during the metrics
     * linger, that the summary counts every release the process made.
     *
     * @return what the process did
     */
    private static Shutdown cutOffByTheDrain(ServiceProcess service, Timeline timeline, Duration freeze)
            throws Exception {
        OneKeyClient.awaitClaims(service, 1);
        service.signal("TERM");
        timeline.signalSent("TERM");
        service.awaitLine(line -> line.contains("received: draining"), Duration.ofSeconds(10));
        service.signal("STOP");
        timeline.add("test", "kill -STOP for " + freeze.toMillis() + " ms, past the drain deadline");
        Thread.sleep(freeze);
        service.signal("CONT");
        timeline.add("test", "kill -CONT");
        String summary = service.awaitLine(line -> line.contains("Shutdown summary"), Duration.ofSeconds(15));
        MetricsScrape metrics = MetricsScrape.of(service.healthPort());
        assertThat(service.awaitExit(Duration.ofSeconds(30)), is(0));
        Matcher released = RELEASED.matcher(summary);
        assertThat(summary, released.find(), is(true));
        assertThat("the summary counts every release, whoever made it: " + summary,
                   (double) Long.parseLong(released.group(1)), is(metrics.sum("idempotency_keys_released_total")));
        return new Shutdown(metrics.sum("authorizer_invocations_total", Map.of("outcome", "approved"))
                            + metrics.sum("authorizer_invocations_total", Map.of("outcome", "declined")),
                            metrics.sum("idempotency_keys_released_total"),
                            metrics.sum("issuer_authorizations_total"));
    }
}
