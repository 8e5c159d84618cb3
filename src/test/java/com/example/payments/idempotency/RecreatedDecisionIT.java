package com.example.payments.idempotency;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import com.example.payments.http.Json;
import com.example.payments.issuer.IssuerStats;
import com.example.payments.testing.Http;
import com.example.payments.testing.IssuerSimulatorProcess;
import com.example.payments.testing.MetricsScrape;
import com.example.payments.testing.PostgresServer;
import com.example.payments.testing.RedisServer;
import com.example.payments.testing.ServiceProcess;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;

import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.hasSize;
import static org.hamcrest.Matchers.is;

/**
 * Every answer that carries an authorization is byte-identical to the first one, {@code createdAt} included, however
 * the decision was found again: replayed by a claim that recovered it after its key's completion was lost, or made
 * again after Redis lost it (the fault soak's 3693 keys whose bodies differed only in {@code createdAt}). The packaged
 * service with {@code authorizer.type: http}, a real issuer simulator and a real Redis; {@code createdAt} is the
 * issuer's time of the decision, which the issuer repeats for the attempt id.
 */
class RecreatedDecisionIT {

    private static final String PREFIX = "payments-authorization:";

    // The registry in Redis, the authorizations in PostgreSQL behind it (required with redis).
    private static Map<String, String> config(RedisServer redis, PostgresServer postgres,
                                              IssuerSimulatorProcess issuer) {
        return Map.of("idempotency.store", "redis", "idempotency.redis.uri", redis.uri(),
                      "database.url", postgres.url(), "database.username", PostgresServer.USER,
                      "idempotency.fingerprint-secret", "it-test-fingerprint-secret",
                      "authorizer.type", "http", "authorizer.http.uri", issuer.uri());
    }

    private static HttpResponse<String> post(ServiceProcess service, String key) throws Exception {
        return Http.post("http://127.0.0.1:" + service.businessPort() + "/v1/authorizations", key,
                         Http.VALID_BODY.replace("order-42", "order-" + key));
    }

    @Test
    void aDecisionRecoveredAfterItsCompletionWasLostReplaysTheFirstAnswerByteForByte() throws Exception {
        RedisServer.assumeInstalled();
        try (RedisServer redis = RedisServer.start(); PostgresServer postgres = PostgresServer.start();
                IssuerSimulatorProcess issuer = IssuerSimulatorProcess.start(Map.of());
                ServiceProcess service = ServiceProcess.start(config(redis, postgres, issuer))) {
            service.awaitReady(Duration.ofSeconds(30));
            String key = UUID.randomUUID().toString();
            HttpResponse<String> first = post(service, key);
            assertThat(first.body(), first.statusCode(), is(201));

            // The key's completion is lost, its recorded decision is not: the next claim must recover the decision.
            RedisClient client = RedisClient.create(redis.uri());
            try (StatefulRedisConnection<String, String> connection = client.connect()) {
                List<String> keyRecords = connection.sync().keys(PREFIX + "idempotency:*");
                assertThat(keyRecords, hasSize(1));
                connection.sync().del(keyRecords.getFirst());
            } finally {
                client.shutdown();
            }
            IssuerStats before = issuer.stats();
            HttpResponse<String> recovered = post(service, key);

            assertThat(recovered.statusCode(), is(201));
            assertThat(recovered.headers().firstValue("Idempotent-Replayed").orElse(""), is("true"));
            assertThat("the recovered replay is the first answer, byte for byte", recovered.body(), is(first.body()));
            assertThat("recovered, not asked again", issuer.stats().requests(), is(before.requests()));
            assertThat(MetricsScrape.of(service.healthPort()).sum("idempotency_requests_total",
                                                                  Map.of("outcome", "recovered")), is(1.0));
        }
    }

    @Test
    void aDecisionRedisLostIsMadeAgainWithTheSameBytesFromTheIssuersAnswer() throws Exception {
        RedisServer.assumeInstalled();
        try (RedisServer redis = RedisServer.start(); PostgresServer postgres = PostgresServer.start();
                IssuerSimulatorProcess issuer = IssuerSimulatorProcess.start(Map.of());
                ServiceProcess service = ServiceProcess.start(config(redis, postgres, issuer))) {
            service.awaitReady(Duration.ofSeconds(30));
            String approved = UUID.randomUUID().toString();
            String declined = UUID.randomUUID().toString();
            HttpResponse<String> firstApproved = post(service, approved);
            HttpResponse<String> firstDeclined = Http.post(
                    "http://127.0.0.1:" + service.businessPort() + "/v1/authorizations", declined,
                    Http.VALID_BODY.replace("order-42", "order-" + declined)
                            .replace("4111111111111111", "4000000000000002"));
            assertThat(firstApproved.body(), firstApproved.statusCode(), is(201));
            assertThat(firstDeclined.body(), firstDeclined.statusCode(), is(201));

            // Back empty, like a Redis restarted without persistence: the key records and the decisions are gone.
            redis.restart();
            Thread.sleep(1500);
            // Past the second: a createdAt taken from this side's clock now would differ.
            HttpResponse<String> againApproved = retryUntilAnswered(service, approved);
            HttpResponse<String> againDeclined = Http.post(
                    "http://127.0.0.1:" + service.businessPort() + "/v1/authorizations", declined,
                    Http.VALID_BODY.replace("order-42", "order-" + declined)
                            .replace("4111111111111111", "4000000000000002"));

            assertThat(againApproved.statusCode(), is(201));
            assertThat("made again, not replayed",
                       againApproved.headers().firstValue("Idempotent-Replayed").isPresent(), is(false));
            assertThat("the same bytes as before the loss", againApproved.body(), is(firstApproved.body()));
            assertThat(againDeclined.body(), is(firstDeclined.body()));
            String id = Json.mapper().readTree(firstApproved.body()).path("id").asText();
            HttpResponse<String> read = Http.get("http://127.0.0.1:" + service.businessPort()
                                                 + "/v1/authorizations/" + id);
            assertThat(read.body(), is(firstApproved.body()));
            IssuerStats stats = issuer.stats();
            assertThat("the issuer decided each payment once", stats.authorizations(), is(2L));
            assertThat("and answered the second executions from its ledger", stats.duplicateAttempts(), is(2L));
        }
    }

    // The service's Lettuce connection reconnects in the background: 503 store-unavailable until it has.
    private static HttpResponse<String> retryUntilAnswered(ServiceProcess service, String key) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        HttpResponse<String> response = post(service, key);
        while (response.statusCode() == 503 && System.nanoTime() < deadline) {
            Thread.sleep(200);
            response = post(service, key);
        }
        return response;
    }
}
