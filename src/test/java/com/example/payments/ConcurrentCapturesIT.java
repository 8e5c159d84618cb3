package com.example.payments;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Collectors;

import com.example.payments.http.Json;
import com.example.payments.testing.Http;
import com.example.payments.testing.IssuerSimulatorProcess;
import com.example.payments.testing.PostgresServer;
import com.example.payments.testing.RedisServer;
import com.example.payments.testing.ServiceProcess;
import com.fasterxml.jackson.databind.JsonNode;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.isOneOf;
import static org.hamcrest.Matchers.lessThanOrEqualTo;

/**
 * Two replicas sharing PostgreSQL (the registry in PostgreSQL, or in Redis in front of it) and one issuer simulator
 * over HTTP: concurrent captures of one authorization never capture more than it authorized, the issuer decides each
 * succeeded capture once, and a full capture racing a void lets exactly one of them through.
 *
 * <p>Both tests of a registry share its servers (started by the first, stopped after the class): each test works on
 * authorizations of its own and counts the issuer's decisions from its own start, and the four JVM and two database
 * starts a fresh set costs are most of this class's time.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ConcurrentCapturesIT {

    private static final long AMOUNT = 1000;
    private static final int CAPTURES = 50;

    private final List<AutoCloseable> started = new ArrayList<>();
    private final Map<String, Servers> running = new HashMap<>();
    private ServiceProcess replicaA;
    private ServiceProcess replicaB;
    private IssuerSimulatorProcess issuer;

    @AfterAll
    void stopAll() {
        for (AutoCloseable resource : started.reversed()) {
            try {
                resource.close();
            } catch (Exception e) {
                // best effort
            }
        }
    }

    private void start(String registry) throws Exception {
        Servers servers = running.get(registry);
        if (servers == null) {
            launch(registry);
            running.put(registry, new Servers(replicaA, replicaB, issuer));
        } else {
            replicaA = servers.replicaA();
            replicaB = servers.replicaB();
            issuer = servers.issuer();
        }
    }

    private record Servers(ServiceProcess replicaA, ServiceProcess replicaB, IssuerSimulatorProcess issuer) {
    }

    private void launch(String registry) throws Exception {
        PostgresServer.assumeInstalled();
        PostgresServer postgres = PostgresServer.start();
        started.add(postgres);
        issuer = IssuerSimulatorProcess.start(Map.of());
        started.add(issuer);
        Map<String, String> config = new HashMap<>(Map.of("authorizer.type", "http", "authorizer.http.uri",
                issuer.uri(), "idempotency.fingerprint-secret", "it-test-fingerprint-secret", "database.url",
                postgres.url(), "database.username", PostgresServer.USER, "idempotency.store", registry));
        // 25 captures of one authorization at once on each replica, on the default pool (10 connections): each
        // reserve and settle is one statement that holds the authorization's row only while it runs, so the captures
        // queue on it briefly, never for the length of a transaction. The pool wait and the statement timeout get
        // room for a busy 2-core machine; every capture must reach the lifecycle's verdict (no 503).
        config.putAll(Map.of("database.connection-timeout", "PT2S", "database.statement-timeout", "PT2S",
                             "authorizer.timeout", "PT2S", "idempotency.in-flight-lease", "PT12S",
                             "shutdown.drain-timeout", "PT15S"));
        if (registry.equals("redis")) {
            RedisServer.assumeInstalled();
            RedisServer redis = RedisServer.start();
            started.add(redis);
            config.put("idempotency.redis.uri", redis.uri());
        }
        replicaA = ServiceProcess.start(config);
        started.add(replicaA);
        replicaB = ServiceProcess.start(config);
        started.add(replicaB);
        replicaA.awaitReady(Duration.ofSeconds(30));
        replicaB.awaitReady(Duration.ofSeconds(30));
    }

    private static String base(ServiceProcess replica) {
        return "http://127.0.0.1:" + replica.businessPort() + "/v1/authorizations";
    }

    private String authorize() throws Exception {
        HttpResponse<String> created = Http.post(base(replicaA), UUID.randomUUID().toString(),
                                                 Http.VALID_BODY.replace("\"value\":1299", "\"value\":" + AMOUNT));
        assertThat(created.body(), created.statusCode(), is(201));
        return Json.mapper().readTree(created.body()).get("id").asText();
    }

    private long issuerDecisions() throws Exception {
        try (HttpClient client = HttpClient.newHttpClient()) {
            String body = client.send(HttpRequest.newBuilder(URI.create(issuer.uri() + "/stats/operations")).build(),
                                      HttpResponse.BodyHandlers.ofString()).body();
            return Json.mapper().readTree(body).get("freshDecisions").asLong();
        }
    }

    @ParameterizedTest(name = "registry {0}")
    @ValueSource(strings = {"postgres", "redis"})
    void fiftyConcurrentCapturesOnTwoReplicasNeverCaptureMoreThanTheAuthorizedAmount(String registry)
            throws Exception {
        start(registry);
        String id = authorize();
        long each = (AMOUNT + 9) / 10;
        long before = issuerDecisions();
        List<Future<HttpResponse<String>>> answers = new ArrayList<>();
        try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int i = 0; i < CAPTURES; i++) {
                ServiceProcess replica = i % 2 == 0 ? replicaA : replicaB;
                answers.add(threads.submit(() -> Http.post(base(replica) + "/" + id + "/captures",
                        UUID.randomUUID().toString(), "{\"amount\":{\"value\":" + each + ",\"currency\":\"EUR\"}}")));
            }
        }
        long succeeded = 0;
        long captured = 0;
        Map<Integer, Long> statuses = new HashMap<>();
        for (Future<HttpResponse<String>> answer : answers) {
            HttpResponse<String> response = answer.get();
            statuses.merge(response.statusCode(), 1L, Long::sum);
            assertThat(response.body(), response.statusCode(), isOneOf(201, 409, 422));
            if (response.statusCode() == 201) {
                JsonNode capture = Json.mapper().readTree(response.body());
                assertThat(response.body(), capture.get("status").asText(), is("SUCCEEDED"));
                succeeded++;
                captured += capture.get("amount").get("value").asLong();
            }
        }
        assertThat("statuses " + statuses, succeeded, is(AMOUNT / each));
        assertThat(captured, lessThanOrEqualTo(AMOUNT));
        assertThat("one fresh issuer decision per 201", issuerDecisions() - before, is(succeeded));
        JsonNode authorization = Json.mapper().readTree(Http.get(base(replicaB) + "/" + id).body());
        assertThat(authorization.get("capturedAmount").get("value").asLong(), is(captured));
        assertThat(authorization.get("state").asText(), is("CAPTURED"));
    }

    @ParameterizedTest(name = "registry {0}")
    @ValueSource(strings = {"postgres", "redis"})
    void aFullCaptureRacingAVoidLetsExactlyOneThrough(String registry) throws Exception {
        start(registry);
        for (int round = 0; round < 5; round++) {
            String id = authorize();
            Future<HttpResponse<String>> capture;
            Future<HttpResponse<String>> voided;
            try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
                capture = threads.submit(() -> Http.post(base(replicaA) + "/" + id + "/captures",
                        UUID.randomUUID().toString(), "{\"amount\":{\"value\":" + AMOUNT + ",\"currency\":\"EUR\"}}"));
                voided = threads.submit(() -> Http.post(base(replicaB) + "/" + id + "/voids",
                                                        UUID.randomUUID().toString(), "{}"));
            }
            List<Integer> statuses = List.of(capture.get().statusCode(), voided.get().statusCode());
            assertThat(capture.get().body() + voided.get().body(),
                       statuses.stream().filter(s -> s == 201).count(), is(1L));
            assertThat(statuses.stream().map(String::valueOf).collect(Collectors.joining(",")),
                       statuses.stream().filter(s -> s == 409).count(), is(1L));
            String state = Json.mapper().readTree(Http.get(base(replicaA) + "/" + id).body()).get("state").asText();
            assertThat(state, isOneOf("CAPTURED", "VOIDED"));
        }
    }
}
