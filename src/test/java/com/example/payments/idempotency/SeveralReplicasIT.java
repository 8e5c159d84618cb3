package com.example.payments.idempotency;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import com.example.payments.testing.Http;
import com.example.payments.testing.MetricsScrape;
import com.example.payments.testing.PostgresServer;
import com.example.payments.testing.RedisServer;
import com.example.payments.testing.ServiceProcess;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.isOneOf;

/**
 * Two service processes on different ports sharing one Redis: the headline promise (no card authorized twice) holds
 * across replicas, a retry on the other replica replays, and GET works on either.
 */
class SeveralReplicasIT {

    private static RedisServer redis;
    private static PostgresServer postgres;
    private static ServiceProcess replicaA;
    private static ServiceProcess replicaB;

    @BeforeAll
    static void startTwoReplicasOnOneRedis() throws Exception {
        if (!RedisServer.installed()) {
            return;
        }
        redis = RedisServer.start();
        // The authorizations live in the PostgreSQL system of record behind Redis: either replica reads them.
        PostgresServer.assumeInstalled();
        postgres = PostgresServer.start();
        Map<String, String> config = redisConfig(redis);
        config.put("database.url", postgres.url());
        config.put("database.username", PostgresServer.USER);
        replicaA = ServiceProcess.start(config);
        replicaB = ServiceProcess.start(config);
        replicaA.awaitReady(Duration.ofSeconds(20));
        replicaB.awaitReady(Duration.ofSeconds(20));
        warmUp(replicaA);
        warmUp(replicaB);
    }

    // A JVM that just started runs interpreted code; production replicas are warm when a burst comes.
    private static void warmUp(ServiceProcess replica) throws Exception {
        try (ExecutorService threads = Executors.newFixedThreadPool(8)) {
            for (int i = 0; i < 200; i++) {
                threads.submit(() -> Http.post(authorizations(replica), UUID.randomUUID().toString(), Http.VALID_BODY));
            }
        }
    }

    @BeforeEach
    void requireRedis() {
        RedisServer.assumeInstalled();
    }

    @AfterAll
    static void stopAll() {
        for (AutoCloseable resource : new AutoCloseable[] {replicaA, replicaB, redis, postgres}) {
            try {
                if (resource != null) {
                    resource.close();
                }
            } catch (Exception e) {
                // best effort
            }
        }
    }

    static Map<String, String> redisConfig(RedisServer server) {
        Map<String, String> config = new HashMap<>();
        config.put("idempotency.store", "redis");
        config.put("idempotency.fingerprint-secret", "it-test-fingerprint-secret");
        config.put("idempotency.redis.uri", server.uri());
        return config;
    }

    @Test
    void fiveHundredConcurrentIdenticalRequestsSplitAcrossTwoReplicasRunTheAuthorizerOnce() throws Exception {
        double before = invocations();
        String key = UUID.randomUUID().toString();
        List<HttpResponse<String>> responses = sendAtOnce(500, i -> i % 2 == 0 ? replicaA : replicaB, key);

        assertThat("statuses " + responses.stream().collect(java.util.stream.Collectors.groupingBy(
                           r -> r.statusCode() + " " + r.body().replaceAll("\"detail\".*", ""),
                           java.util.stream.Collectors.counting())),
                   invocations() - before, is(1.0));
        List<HttpResponse<String>> originals = responses.stream()
                .filter(r -> r.statusCode() == 201 && r.headers().firstValue("Idempotent-Replayed").isEmpty())
                .toList();
        assertThat(originals.size(), is(1));
        String original = originals.getFirst().body();
        for (HttpResponse<String> response : responses) {
            assertThat(response.statusCode() + " " + response.body() + "\n" + warnings(), response.statusCode(),
                       isOneOf(201, 409));
            if (response.statusCode() == 201) {
                assertThat(response.body(), is(original));
            }
        }
    }

    @Test
    void aRetryOnReplicaBOfARequestCompletedOnAReplaysAsAnswerAndEitherReplicaFindsIt() throws Exception {
        String key = UUID.randomUUID().toString();
        HttpResponse<String> first = Http.post(authorizations(replicaA), key, Http.VALID_BODY);
        assertThat(first.statusCode(), is(201));

        HttpResponse<String> retry = Http.post(authorizations(replicaB), key, Http.VALID_BODY);
        assertThat(retry.statusCode(), is(201));
        assertThat(retry.headers().firstValue("Idempotent-Replayed").orElse(""), is("true"));
        assertThat(retry.body(), is(first.body()));
        String location = first.headers().firstValue("Location").orElseThrow();
        assertThat(retry.headers().firstValue("Location").orElseThrow(), is(location));

        for (ServiceProcess replica : List.of(replicaA, replicaB)) {
            HttpResponse<String> found = Http.get("http://127.0.0.1:" + replica.businessPort() + location);
            assertThat(found.statusCode(), is(200));
            assertThat(found.body(), is(first.body()));
            assertThat(Http.get(authorizations(replica) + "/" + UUID.randomUUID()).statusCode(), is(404));
        }
    }

    @Test
    void aKeyOfAll255PrintableAsciiCharactersIsReplayedAcrossReplicas() throws Exception {
        StringBuilder value = new StringBuilder();
        for (int i = 0; value.length() < 255; i++) {
            value.append((char) (0x20 + i % 95));
        }
        // As an sf-string, so the leading space, the quotes and the backslashes survive the header.
        String header = "\"" + value.toString().replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
        HttpResponse<String> first = Http.post(authorizations(replicaA), header, Http.VALID_BODY);
        assertThat(first.body(), first.statusCode(), is(201));

        HttpResponse<String> retry = Http.post(authorizations(replicaB), header, Http.VALID_BODY);
        assertThat(retry.statusCode(), is(201));
        assertThat(retry.headers().firstValue("Idempotent-Replayed").orElse(""), is("true"));
        assertThat(retry.body(), is(first.body()));
    }

    @Test
    void noValueUnderTheKeyPrefixHoldsACardNumberOrCvc() throws Exception {
        String[] cards = {"4111111111111111", "5555555555554444", "4000000000000002", "4000000000009995"};
        String cvc = "7391";
        for (String card : cards) {
            String body = Http.VALID_BODY.replace("4111111111111111", card).replace("\"123\"", "\"" + cvc + "\"");
            assertThat(Http.post(authorizations(replicaA), UUID.randomUUID().toString(), body).statusCode(), is(201));
        }
        List<String> values = RedisScan.valuesUnder(redis.uri(), "payments-authorization:");
        assertThat(values.size(), greaterThan(2 * cards.length));
        for (String value : values) {
            for (String card : cards) {
                assertThat(value, !value.contains(card), is(true));
            }
            assertThat(value, value.toLowerCase().contains("cvc"), is(false));
            assertThat(value, RedisScan.hasJsonValue(value, cvc), is(false));
        }
    }

    private static List<HttpResponse<String>> sendAtOnce(int count,
                                                         java.util.function.IntFunction<ServiceProcess> target,
                                                         String key) throws Exception {
        CountDownLatch start = new CountDownLatch(1);
        List<Future<HttpResponse<String>>> pending = new ArrayList<>();
        try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int i = 0; i < count; i++) {
                HttpRequest request = Http.request(authorizations(target.apply(i)))
                        .timeout(Duration.ofSeconds(30))
                        .header("Content-Type", "application/json")
                        .header("Idempotency-Key", key)
                        .POST(HttpRequest.BodyPublishers.ofString(Http.VALID_BODY))
                        .build();
                pending.add(threads.submit(() -> {
                    start.await();
                    return Http.client().send(request, HttpResponse.BodyHandlers.ofString());
                }));
            }
            start.countDown();
        }
        List<HttpResponse<String>> responses = new ArrayList<>();
        for (Future<HttpResponse<String>> response : pending) {
            responses.add(response.get());
        }
        return responses;
    }

    private static String warnings() {
        List<String> lines = new ArrayList<>();
        for (ServiceProcess replica : List.of(replicaA, replicaB)) {
            replica.output().stream().filter(line -> line.contains(" WARN ") || line.contains(" ERROR "))
                    .limit(20).forEach(lines::add);
        }
        return String.join("\n", lines);
    }

    private static double invocations() throws Exception {
        return MetricsScrape.of(replicaA.healthPort()).sum("authorizer_invocations_total")
               + MetricsScrape.of(replicaB.healthPort()).sum("authorizer_invocations_total");
    }

    private static String authorizations(ServiceProcess replica) {
        return "http://127.0.0.1:" + replica.businessPort() + "/v1/authorizations";
    }
}
