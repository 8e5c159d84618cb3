package com.example.payments.idempotency;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;

import com.example.payments.testing.Http;
import com.example.payments.testing.PostgresServer;
import com.example.payments.testing.RedisServer;
import com.example.payments.testing.ServiceProcess;

import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.empty;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.lessThan;

/**
 * Redis stopped for 10 s under light load: the service fails closed (no authorization without idempotency), stays
 * alive, leaves the load balancer through readiness, and comes back by itself when Redis does.
 */
class RedisOutageIT {

    private static final Duration CHECK_TIMEOUT = Duration.ofSeconds(1);

    /** One poll: when it was sent (ms since the outage began), what came back. */
    private record Sample(long atMillis, int status, String body, boolean retryAfter) {
    }

    @Test
    void redisStoppedForTenSecondsFailsClosedKeepsLivenessAndRecoversWithoutARestart() throws Exception {
        try (RedisServer redis = RedisServer.start(); PostgresServer postgres = PostgresServer.start();
                ServiceProcess service = ServiceProcess.start(Map.of(
                        "idempotency.store", "redis", "idempotency.fingerprint-secret", "it-test-fingerprint-secret",
                        "idempotency.redis.uri", redis.uri(),
                        "database.url", postgres.url(), "database.username", PostgresServer.USER,
                        "health.readiness.check-timeout", "PT" + CHECK_TIMEOUT.toSeconds() + "S"))) {
            service.awaitReady(Duration.ofSeconds(20));
            HttpResponse<String> before = post(service);
            assertThat(before.statusCode(), is(201));
            String location = "http://127.0.0.1:" + service.businessPort()
                              + before.headers().firstValue("Location").orElseThrow();

            List<Sample> live = new CopyOnWriteArrayList<>();
            AtomicBoolean polling = new AtomicBoolean(true);
            long outageStart = System.nanoTime();
            Thread liveness = Thread.ofVirtual().start(() -> poll(polling, outageStart, live,
                    () -> Http.get(health(service) + "/health/live")));

            redis.stop();
            long sent = System.nanoTime();
            HttpResponse<String> ready = Http.get(health(service) + "/health/ready");
            Duration took = Duration.ofNanos(System.nanoTime() - sent);
            assertThat(ready.statusCode(), is(503));
            assertThat(ready.body(), containsString("idempotency-store"));
            assertThat(took, lessThan(CHECK_TIMEOUT.plusMillis(500)));

            List<Sample> posts = new ArrayList<>();
            while (System.nanoTime() - outageStart < Duration.ofSeconds(10).toNanos()) {
                posts.add(sample(outageStart, post(service)));
                Thread.sleep(250);
            }
            assertThat(posts.stream().filter(p -> p.status() != 503 || !p.retryAfter()).toList(), is(empty()));
            assertThat(Http.get(health(service) + "/health/ready").statusCode(), is(503));
            // GET reads the resource store, PostgreSQL behind the registry, which the Redis outage does not touch.
            Sample get = sample(outageStart, Http.get(location));
            assertThat(get.body(), get.status(), is(200));

            redis.restart();
            Sample recovered = awaitCreated(service, outageStart);
            assertThat(Http.get(health(service) + "/health/ready").statusCode(), is(200));
            polling.set(false);
            liveness.join();

            assertThat(live.size() > 10, is(true));
            assertThat(live.stream().filter(s -> s.status() != 200).toList(), is(empty()));
            assertThat("recovered " + recovered.atMillis() + " ms after the outage began", recovered.atMillis(),
                       lessThan(15_000L));
            assertThat(service.alive(), is(true));
        }
    }

    private static Sample awaitCreated(ServiceProcess service, long outageStart) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        Sample last = null;
        while (System.nanoTime() < deadline) {
            last = sample(outageStart, post(service));
            if (last.status() == 201) {
                return last;
            }
            Thread.sleep(100);
        }
        throw new AssertionError("No 201 within 5 s of Redis returning; last: " + last);
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

    private static Sample sample(long start, HttpResponse<String> response) {
        return new Sample(millisSince(start), response.statusCode(), response.body(),
                          response.headers().firstValue("Retry-After").isPresent());
    }

    private static long millisSince(long start) {
        return Duration.ofNanos(System.nanoTime() - start).toMillis();
    }

    private static HttpResponse<String> post(ServiceProcess service) throws Exception {
        return Http.post("http://127.0.0.1:" + service.businessPort() + "/v1/authorizations",
                         UUID.randomUUID().toString(), Http.VALID_BODY);
    }

    private static String health(ServiceProcess service) {
        return "http://127.0.0.1:" + service.healthPort();
    }

    @FunctionalInterface
    private interface Probe {
        HttpResponse<String> get() throws Exception;
    }
}
