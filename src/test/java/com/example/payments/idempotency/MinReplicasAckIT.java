package com.example.payments.idempotency;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;

import com.example.payments.testing.Http;
import com.example.payments.testing.MetricsScrape;
import com.example.payments.testing.PostgresServer;
import com.example.payments.testing.RedisServer;
import com.example.payments.testing.ServiceProcess;

import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.is;

/**
 * {@code idempotency.redis.min-replicas-ack: 1} against a real primary: without a replica the claim is not confirmed,
 * the request answers 503 and the authorizer never runs; with a {@code --replicaof} replica the same retry goes
 * through.
 */
class MinReplicasAckIT {

    @Test
    void withoutAReplicaNothingIsAuthorizedAndOnceOneSyncedTheRetryIs() throws Exception {
        try (RedisServer primary = RedisServer.start(); PostgresServer postgres = PostgresServer.start();
                ServiceProcess service = ServiceProcess.start(Map.of(
                        "idempotency.store", "redis", "idempotency.fingerprint-secret", "it-test-fingerprint-secret",
                        "idempotency.redis.uri", primary.uri(),
                        "database.url", postgres.url(), "database.username", PostgresServer.USER,
                        "idempotency.redis.min-replicas-ack", "1",
                        // Replicated writes may take PT5.7S; the drain and the lease must outlast them and the
                        // authorizer (PT5S).
                        "shutdown.drain-timeout", "PT12S", "idempotency.in-flight-lease", "PT12S"))) {
            service.awaitReady(Duration.ofSeconds(20));
            String key = UUID.randomUUID().toString();

            HttpResponse<String> refused = post(service, key);
            assertThat(refused.body(), refused.statusCode(), is(503));
            assertThat(refused.headers().firstValue("Content-Type").orElse(""),
                       containsString("application/problem+json"));
            assertThat(refused.headers().firstValue("Retry-After").isPresent(), is(true));
            assertThat(MetricsScrape.of(service.healthPort()).sum("authorizer_invocations_total"), is(0.0));
            assertThat(MetricsScrape.of(service.healthPort())
                               .sum("idempotency_requests_total", Map.of("outcome", "unavailable")),
                       is(1.0));

            try (RedisServer replica = primary.startReplica()) {
                HttpResponse<String> retried = post(service, key);
                assertThat(retried.body(), retried.statusCode(), is(201));
                assertThat(retried.headers().firstValue("Idempotent-Replayed").isPresent(), is(false));
                HttpResponse<String> replayed = post(service, key);
                assertThat(replayed.headers().firstValue("Idempotent-Replayed").orElse(""), is("true"));
                assertThat(replayed.body(), is(retried.body()));
                assertThat(MetricsScrape.of(service.healthPort()).sum("authorizer_invocations_total"), is(1.0));
            }
        }
    }

    private static HttpResponse<String> post(ServiceProcess service, String key) throws Exception {
        return Http.post("http://127.0.0.1:" + service.businessPort() + "/v1/authorizations", key, Http.VALID_BODY);
    }
}
