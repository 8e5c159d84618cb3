package com.example.payments.idempotency;

import java.io.IOException;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;

import com.example.payments.testing.Http;
import com.example.payments.testing.PostgresServer;
import com.example.payments.testing.ServiceProcess;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.empty;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.lessThan;

/**
 * The store behind the idempotency registry going down while the service runs, over the wire, run on each backend by
 * a subclass that says how the store goes down and comes back: the service fails closed (every POST meanwhile 503 with
 * Retry-After: no authorization without its store), stays alive, leaves the load balancer through readiness naming
 * the store (answered within the check timeout), and comes back by itself when the store does.
 */
abstract class StoreOutageContract {

    /** {@code health.readiness.check-timeout} of the service under test. */
    static final Duration CHECK_TIMEOUT = Duration.ofSeconds(1);

    /** One poll: when it was sent (ms since the outage began), what came back. */
    record Sample(long atMillis, int status, String body, boolean retryAfter) {
    }

    /**
     * What the test expects of one backend's outage.
     *
     * @param dependency     the store's name in readiness errors, e.g. {@code database}
     * @param readyWithin    how long the service may take to become ready at the start (s)
     * @param settlesWithin  how long readiness may lag the store going down or coming back (zero: its first
     *                       answer afterwards already says so)
     * @param refusedFor     how long the test keeps posting, every 250 ms, while the store is down (zero: one POST)
     * @param readStatus     what a GET of an authorization made before the outage answers meanwhile
     * @param recoversWithin how long after the store is back a POST may still be refused (s)
     * @param liveSamples    how many liveness answers the outage must have seen more than
     */
    record Expectations(String dependency, Duration readyWithin, Duration settlesWithin, Duration refusedFor,
                        int readStatus, Duration recoversWithin, int liveSamples) {
    }

    @FunctionalInterface
    interface Probe {
        HttpResponse<String> get() throws Exception;
    }

    /** The system of record, behind every backend. */
    PostgresServer postgres;

    /** @return what this backend's outage must look like */
    abstract Expectations expectations();

    /**
     * Starts the backend's own servers besides PostgreSQL (skipping the test when one is not installed).
     *
     * @return the service's configuration of the backend, and its servers
     * @throws Exception when a server does not start
     */
    abstract StoreBackend startBackend() throws Exception;

    /**
     * Takes the store down under the running service, asserting what requests cut off by it got.
     *
     * @param service the service under test, ready
     * @throws Exception when the store cannot be stopped
     */
    abstract void takeDown(ServiceProcess service) throws Exception;

    /**
     * Brings the store back.
     *
     * @throws Exception when it does not start
     */
    abstract void bringBack() throws Exception;

    /**
     * What the backend promises once the service authorizes again.
     *
     * @param service   the service under test
     * @param outage    {@link System#nanoTime} when the outage began
     * @param back      {@link System#nanoTime} when the store was back
     * @param recovered the first POST answered 201 afterwards
     * @throws Exception when the store cannot be read
     */
    abstract void afterRecovery(ServiceProcess service, long outage, long back, Sample recovered) throws Exception;

    @BeforeEach
    void requirePostgres() {
        PostgresServer.assumeInstalled();
    }

    @Test
    void theStoreGoingDownFailsClosedKeepsLivenessAndRecoversWithoutARestart() throws Exception {
        Expectations expected = expectations();
        try (StoreBackend backend = startBackend(); PostgresServer database = PostgresServer.start()) {
            postgres = database;
            Map<String, String> config = new HashMap<>(backend.config());
            config.putAll(Map.of("idempotency.fingerprint-secret", "it-test-fingerprint-secret",
                                 "database.url", postgres.url(), "database.username", PostgresServer.USER,
                                 "health.readiness.check-timeout", "PT" + CHECK_TIMEOUT.toSeconds() + "S"));
            try (ServiceProcess service = ServiceProcess.start(config)) {
                service.awaitReady(expected.readyWithin());
                assertOutageAndRecovery(service, expected);
            }
        }
    }

    private void assertOutageAndRecovery(ServiceProcess service, Expectations expected) throws Exception {
        HttpResponse<String> before = post(service, UUID.randomUUID().toString());
        assertThat(before.statusCode(), is(201));
        String location = "http://127.0.0.1:" + service.businessPort()
                          + before.headers().firstValue("Location").orElseThrow();

        List<Sample> live = new CopyOnWriteArrayList<>();
        AtomicBoolean polling = new AtomicBoolean(true);
        long outage = System.nanoTime();
        Thread liveness = Thread.ofVirtual().start(() -> poll(polling, outage, live,
                () -> Http.get(health(service) + "/health/live")));
        try {
            takeDown(service);
            long sent = System.nanoTime();
            Sample ready = awaitStatus(outage, () -> Http.get(health(service) + "/health/ready"), 503,
                                       expected.dependency(), expected.settlesWithin());
            // The last readiness answer came within the check timeout: a store that is down never holds it up.
            assertThat(Duration.ofNanos(System.nanoTime() - sent),
                       lessThan(expected.settlesWithin().plus(CHECK_TIMEOUT).plusMillis(500)));
            assertThat(ready.body(), containsString(expected.dependency()));

            List<Sample> posts = new ArrayList<>();
            do {
                posts.add(sample(outage, post(service, UUID.randomUUID().toString())));
                Thread.sleep(250);
            } while (System.nanoTime() - outage < expected.refusedFor().toNanos());
            assertThat(posts.stream().filter(p -> p.status() != 503 || !p.retryAfter()).toList(), is(empty()));
            assertThat(Http.get(health(service) + "/health/ready").statusCode(), is(503));
            Sample read = sample(outage, Http.get(location));
            assertThat(read.body(), read.status(), is(expected.readStatus()));

            bringBack();
            long back = System.nanoTime();
            Sample recovered = awaitStatus(outage, () -> post(service, UUID.randomUUID().toString()), 201, "",
                                           expected.recoversWithin());
            assertThat(awaitStatus(outage, () -> Http.get(health(service) + "/health/ready"), 200, "",
                                   expected.settlesWithin()).status(), is(200));
            afterRecovery(service, outage, back, recovered);
        } finally {
            polling.set(false);
            liveness.join();
        }

        assertThat(live.size(), greaterThan(expected.liveSamples()));
        assertThat(live.stream().filter(s -> s.status() != 200).toList(), is(empty()));
        assertThat(service.alive(), is(true));
    }

    /**
     * Polls until the probe answers the status with the text in its body, at least once.
     *
     * @param start   {@link System#nanoTime} the sample times count from
     * @param probe   the request
     * @param status  the status awaited
     * @param body    text the body must contain ({@code ""}: any)
     * @param timeout how long to keep polling (every 200 ms) after the first answer
     * @return the answer awaited
     * @throws Exception      when the probe fails otherwise than with an I/O error
     * @throws AssertionError when it does not come in time
     */
    static Sample awaitStatus(long start, Probe probe, int status, String body, Duration timeout) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        Sample last;
        do {
            try {
                last = sample(start, probe.get());
                if (last.status() == status && last.body().contains(body)) {
                    return last;
                }
            } catch (IOException e) {
                last = new Sample(millisSince(start), -1, e.toString(), false);
            }
            Thread.sleep(200);
        } while (System.nanoTime() < deadline);
        throw new AssertionError("No " + status + " within " + timeout + "; last: " + last);
    }

    private static void poll(AtomicBoolean polling, long start, List<Sample> samples, Probe probe) {
        while (polling.get()) {
            try {
                samples.add(sample(start, probe.get()));
                Thread.sleep(200);
            } catch (Exception e) {
                samples.add(new Sample(millisSince(start), -1, e.toString(), false));
            }
        }
    }

    static Sample sample(long start, HttpResponse<String> response) {
        return new Sample(millisSince(start), response.statusCode(), response.body(),
                          response.headers().firstValue("Retry-After").isPresent());
    }

    static long millisSince(long start) {
        return Duration.ofNanos(System.nanoTime() - start).toMillis();
    }

    static HttpResponse<String> post(ServiceProcess service, String key) throws Exception {
        return Http.post("http://127.0.0.1:" + service.businessPort() + "/v1/authorizations", key, Http.VALID_BODY);
    }

    static String health(ServiceProcess service) {
        return "http://127.0.0.1:" + service.healthPort();
    }
}
