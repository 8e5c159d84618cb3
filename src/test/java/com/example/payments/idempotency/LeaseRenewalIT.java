package com.example.payments.idempotency;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

import com.example.payments.testing.Http;
import com.example.payments.testing.MetricsScrape;
import com.example.payments.testing.RedisServer;
import com.example.payments.testing.ServiceProcess;

import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;

/**
 * The in-flight lease across replicas: renewed while its request runs (so a lease shorter than the request does not
 * let a duplicate in), and expiring once its owner died (so the client's retry is not locked out for good).
 */
class LeaseRenewalIT {

    @Test
    void aLeaseShorterThanTheRequestIsRenewedAndExpiresOnlyAfterItsOwnerIsKilled() throws Exception {
        Map<String, String> config = Map.of(
                "idempotency.store", "redis", "idempotency.fingerprint-secret", "it-test-fingerprint-secret",
                "idempotency.in-flight-lease", "PT2S",
                "authorizer.simulated-latency", "PT6S",
                "authorizer.timeout", "PT8S",
                "shutdown.drain-timeout", "PT12S");
        try (RedisServer redis = RedisServer.start();
                ServiceProcess owner = ServiceProcess.start(with(config, redis));
                ServiceProcess other = ServiceProcess.start(with(config, redis))) {
            owner.awaitReady(Duration.ofSeconds(20));
            other.awaitReady(Duration.ofSeconds(20));
            String key = UUID.randomUUID().toString();

            long start = System.nanoTime();
            CompletableFuture<HttpResponse<String>> first = CompletableFuture.supplyAsync(() -> post(owner, key));
            sleepUntil(start, Duration.ofSeconds(4));
            HttpResponse<String> duplicate = post(other, key);
            assertThat("duplicate at 4 s, lease renewed twice over: " + duplicate.body(), duplicate.statusCode(),
                       is(409));
            assertThat(duplicate.headers().firstValue("Retry-After").isPresent(), is(true));

            owner.signal("KILL");
            owner.awaitExit(Duration.ofSeconds(10));
            assertThat(first.handle((response, failure) -> failure != null).join(), is(true));
            assertThat("right after the kill the lease still holds", post(other, key).statusCode(), is(409));

            sleepUntil(start, Duration.ofMillis(4000 + 3000));
            HttpResponse<String> retry = post(other, key);
            assertThat(retry.body(), retry.statusCode(), is(201));
            assertThat(retry.headers().firstValue("Idempotent-Replayed").isPresent(), is(false));
            assertThat(MetricsScrape.of(other.healthPort()).sum("authorizer_invocations_total"), is(1.0));
        }
    }

    private static Map<String, String> with(Map<String, String> config, RedisServer redis) {
        Map<String, String> all = new java.util.HashMap<>(config);
        all.put("idempotency.redis.uri", redis.uri());
        return all;
    }

    private static HttpResponse<String> post(ServiceProcess replica, String key) {
        try {
            return Http.post("http://127.0.0.1:" + replica.businessPort() + "/v1/authorizations", key,
                             Http.VALID_BODY);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static void sleepUntil(long startNanos, Duration offset) throws InterruptedException {
        long left = startNanos + offset.toNanos() - System.nanoTime();
        if (left > 0) {
            Thread.sleep(Duration.ofNanos(left));
        }
    }
}
