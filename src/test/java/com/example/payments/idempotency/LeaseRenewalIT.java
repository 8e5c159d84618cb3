package com.example.payments.idempotency;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

import com.example.payments.redis.RedisConnection;
import com.example.payments.testing.Http;
import com.example.payments.testing.MetricsScrape;
import com.example.payments.testing.PostgresServer;
import com.example.payments.testing.RedisServer;
import com.example.payments.testing.ServiceProcess;

import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;

/**
 * The in-flight lease across replicas: renewed while its request runs, and expiring once its owner died (so the
 * client's retry is not locked out for good). The configuration is valid: the lease outlasts the authorizer timeout
 * plus the Redis calls of a request (lease floor).
 */
class LeaseRenewalIT {

    private static final Duration LEASE = Duration.ofSeconds(5);

    private static final Map<String, String> CONFIG = Map.of(
            "idempotency.store", "redis", "idempotency.fingerprint-secret", "it-test-fingerprint-secret",
            // > authorizer.timeout 3.2 s + the Redis worst case 1.5 s; renewed every 1.67 s, so a 2.2 s call sees a
            // renewal, and it ends 1 s inside the authorizer timeout even on a loaded machine (the test wants its 201)
            "idempotency.in-flight-lease", LEASE.toString(),
            "authorizer.timeout", "PT3.2S",
            "authorizer.simulated-latency", "PT2.2S");

    @Test
    void aLeaseIsRenewedWhileItsRequestRuns() throws Exception {
        try (RedisServer redis = RedisServer.start(); PostgresServer postgres = PostgresServer.start();
                ServiceProcess owner = ServiceProcess.start(with(redis, postgres));
                RedisConnection connection = RedisConnection.create(RedisIdempotencyStoreTest.settings(redis.uri(),
                                                                                                      0))) {
            owner.awaitReady(Duration.ofSeconds(20));
            String key = UUID.randomUUID().toString();
            String record = "payments-authorization:idempotency:"
                            + RequestIdentities.lookupKey("authorize", "m_123", new IdempotencyKey(key));
            CompletableFuture<HttpResponse<String>> request = CompletableFuture.supplyAsync(() -> post(owner, key));
            long previous = Long.MAX_VALUE;
            boolean extended = false;
            while (!request.isDone() && !extended) {
                long ttl;
                try {
                    ttl = connection.call("pttl", c -> c.pttl(record));
                } catch (IdempotencyStore.UnavailableException e) {
                    // This probe's own command timed out on a busy machine: no sample this round.
                    continue;
                }
                extended = ttl > 0 && previous != Long.MAX_VALUE && ttl > previous;
                previous = ttl > 0 ? ttl : previous;
                Thread.sleep(50);
            }
            assertThat("the TTL of the IN_FLIGHT record went up while the request ran", extended, is(true));
            assertThat(request.join().statusCode(), is(201));
        }
    }

    @Test
    void theLeaseOfAKilledOwnerExpiresAndTheRetryRunsOnTheOtherReplica() throws Exception {
        try (RedisServer redis = RedisServer.start(); PostgresServer postgres = PostgresServer.start();
                ServiceProcess owner = ServiceProcess.start(with(redis, postgres));
                ServiceProcess other = ServiceProcess.start(with(redis, postgres))) {
            owner.awaitReady(Duration.ofSeconds(20));
            other.awaitReady(Duration.ofSeconds(20));
            String key = UUID.randomUUID().toString();

            CompletableFuture<HttpResponse<String>> first = CompletableFuture.supplyAsync(() -> post(owner, key));
            awaitClaim(owner);
            HttpResponse<String> duplicate = post(other, key);
            assertThat("while the owner runs: " + duplicate.body(), duplicate.statusCode(), is(409));
            assertThat(duplicate.headers().firstValue("Retry-After").isPresent(), is(true));

            owner.signal("KILL");
            long killed = System.nanoTime();
            owner.awaitExit(Duration.ofSeconds(10));
            assertThat(first.handle((response, failure) -> failure != null).join(), is(true));
            assertThat("right after the kill the lease still holds", post(other, key).statusCode(), is(409));

            // A whole lease after the kill (its last renewal came before it), and a little more: the lease has expired.
            Thread.sleep(Math.max(0, killed + LEASE.plusMillis(500).toNanos() - System.nanoTime()) / 1_000_000);
            HttpResponse<String> retry = post(other, key);
            assertThat(retry.body(), retry.statusCode(), is(201));
            assertThat(retry.headers().firstValue("Idempotent-Replayed").isPresent(), is(false));
            assertThat(MetricsScrape.of(other.healthPort()).sum("authorizer_invocations_total"), is(1.0));
        }
    }

    private static void awaitClaim(ServiceProcess service) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (MetricsScrape.of(service.healthPort()).sum("idempotency_requests_total", Map.of("outcome", "new")) < 1) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no claim within 10 s");
            }
            Thread.sleep(20);
        }
    }

    // The registry in Redis, the authorizations in PostgreSQL behind it (required with redis).
    private static Map<String, String> with(RedisServer redis, PostgresServer postgres) {
        Map<String, String> all = new HashMap<>(CONFIG);
        all.put("idempotency.redis.uri", redis.uri());
        all.put("database.url", postgres.url());
        all.put("database.username", PostgresServer.USER);
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
}
