package com.example.payments.idempotency;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Collectors;

import com.example.payments.testing.Http;
import com.example.payments.testing.MetricsScrape;
import com.example.payments.testing.PostgresServer;
import com.example.payments.testing.ServiceProcess;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.isOneOf;

/**
 * Two service processes sharing one private PostgreSQL, over the wire: the headline promise (no card authorized
 * twice) holds across replicas with one row in {@code authorizations}; a replica started afterwards replays every
 * completed key from the database; no table holds a card number or CVC.
 */
class PostgresReplicasIT {

    private static PostgresServer postgres;
    private static ServiceProcess replicaA;
    private static ServiceProcess replicaB;

    @BeforeAll
    static void startTwoReplicasOnOneDatabase() throws Exception {
        if (!PostgresServer.installed()) {
            return;
        }
        postgres = PostgresServer.start();
        replicaA = ServiceProcess.start(postgresConfig(postgres));
        replicaB = ServiceProcess.start(postgresConfig(postgres));
        replicaA.awaitReady(Duration.ofSeconds(60));
        replicaB.awaitReady(Duration.ofSeconds(60));
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
    void requirePostgres() {
        PostgresServer.assumeInstalled();
    }

    @AfterAll
    static void stopAll() {
        for (AutoCloseable resource : new AutoCloseable[] {replicaA, replicaB, postgres}) {
            try {
                if (resource != null) {
                    resource.close();
                }
            } catch (Exception e) {
                // best effort
            }
        }
    }

    static Map<String, String> postgresConfig(PostgresServer server) {
        Map<String, String> config = new HashMap<>();
        config.put("idempotency.store", "postgres");
        config.put("idempotency.fingerprint-secret", "it-test-fingerprint-secret");
        config.put("database.url", server.url());
        config.put("database.username", PostgresServer.USER);
        // Two busy cores: generous bounds, still within the lease floor (PT20S > 5 s + 2 x (2 + 3 + 0.25) s).
        config.put("database.statement-timeout", "PT3S");
        config.put("database.lock-timeout", "PT2S");
        config.put("database.connection-timeout", "PT2S");
        config.put("idempotency.in-flight-lease", "PT20S");
        config.put("shutdown.drain-timeout", "PT20S");
        config.put("shutdown.hard-deadline", "PT40S");
        return config;
    }

    @Test
    void fiveHundredConcurrentIdenticalRequestsOnTwoReplicasMakeOneAuthorization() throws Exception {
        double before = invocations();
        String key = UUID.randomUUID().toString();
        List<HttpResponse<String>> responses = sendAtOnce(500, i -> i % 2 == 0 ? replicaA : replicaB, key);

        Map<String, Long> statuses = responses.stream().collect(Collectors.groupingBy(
                r -> r.statusCode() + " " + r.body().replaceAll("\"detail\".*", ""), Collectors.counting()));
        assertThat("statuses " + statuses, invocations() - before, is(1.0));
        List<HttpResponse<String>> originals = responses.stream()
                .filter(r -> r.statusCode() == 201 && r.headers().firstValue("Idempotent-Replayed").isEmpty())
                .toList();
        assertThat("statuses " + statuses, originals.size(), is(1));
        String original = originals.getFirst().body();
        for (HttpResponse<String> response : responses) {
            // 503 store-unavailable (nothing done, Retry-After) is failing closed when an overloaded machine makes a
            // request wait longer than database.connection-timeout for a pooled connection; never a second decision.
            assertThat(response.statusCode() + " " + response.body(), response.statusCode(), isOneOf(201, 409, 503));
            if (response.statusCode() == 503) {
                assertThat(response.body(), containsString("store-unavailable"));
                assertThat(response.headers().firstValue("Retry-After").isPresent(), is(true));
            }
            if (response.statusCode() == 201) {
                assertThat(response.body(), is(original));
            }
        }
        String id = original.replaceAll(".*\"id\":\"([^\"]+)\".*", "$1");
        try (Connection connection = postgres.connect();
             PreparedStatement rows = connection.prepareStatement(
                     "SELECT count(*), min(status), min(last_four), min(amount) FROM authorizations WHERE attempt_id = "
                     + "(SELECT attempt_id FROM authorizations WHERE id = ?::uuid)")) {
            rows.setString(1, id);
            try (ResultSet row = rows.executeQuery()) {
                row.next();
                assertThat(row.getLong(1), is(1L));
                assertThat(row.getString(2) + " " + row.getString(3) + " " + row.getLong(4), is("APPROVED 1111 1299"));
            }
        }
    }

    @Test
    void aReplicaStartedAfterwardsReplaysEveryCompletedKeyFromTheDatabase() throws Exception {
        Map<String, HttpResponse<String>> completed = new LinkedHashMap<>();
        for (int i = 0; i < 20; i++) {
            String key = UUID.randomUUID().toString();
            HttpResponse<String> first = Http.post(authorizations(i % 2 == 0 ? replicaA : replicaB), key,
                                                   Http.VALID_BODY);
            assertThat(first.body(), first.statusCode(), is(201));
            completed.put(key, first);
        }
        try (ServiceProcess restarted = ServiceProcess.start(postgresConfig(postgres))) {
            restarted.awaitReady(Duration.ofSeconds(60));
            for (Map.Entry<String, HttpResponse<String>> entry : completed.entrySet()) {
                HttpResponse<String> replay = Http.post(authorizations(restarted), entry.getKey(), Http.VALID_BODY);
                assertThat(replay.body(), replay.statusCode(), is(201));
                assertThat(replay.headers().firstValue("Idempotent-Replayed").orElse(""), is("true"));
                assertThat(replay.body(), is(entry.getValue().body()));
                String location = entry.getValue().headers().firstValue("Location").orElseThrow();
                HttpResponse<String> found = Http.get("http://127.0.0.1:" + restarted.businessPort() + location);
                assertThat(found.statusCode(), is(200));
                assertThat(found.body(), is(entry.getValue().body()));
            }
            MetricsScrape metrics = MetricsScrape.of(restarted.healthPort());
            assertThat(metrics.sum("authorizer_invocations_total"), is(0.0));
            assertThat(metrics.sum("database_statement_duration_seconds_count", Map.of("statement", "claim")),
                       is((double) completed.size()));
            assertThat(metrics.sum("database_pool_max_connections"), is(10.0));
            assertThat(metrics.sum("database_pool_connections", Map.of("state", "idle")) > 0, is(true));

            // SIGTERM: the pool closes in the cleanup phase, after the drain, and the process exits 0.
            restarted.signal("TERM");
            assertThat(restarted.awaitExit(Duration.ofSeconds(60)), is(0));
            String output = String.join("\n", restarted.output());
            int cleanup = output.indexOf("Shutdown phase cleanup");
            assertThat(output, cleanup >= 0 && output.indexOf("payments-authorization - Shutdown completed", cleanup)
                               > cleanup, is(true));
        }
    }

    @Test
    void noTableHoldsACardNumberOrCvc() throws Exception {
        String[] cards = {"4111111111111111", "5555555555554444", "4000000000000002", "4000000000009995"};
        String cvc = "7391";
        for (String card : cards) {
            String body = Http.VALID_BODY.replace("4111111111111111", card).replace("\"123\"", "\"" + cvc + "\"");
            assertThat(Http.post(authorizations(replicaA), UUID.randomUUID().toString(), body).statusCode(), is(201));
        }
        List<String> rows = new ArrayList<>();
        try (Connection connection = postgres.connect(); Statement statement = connection.createStatement()) {
            for (String table : List.of("idempotency_records", "decisions", "authorizations", "merchant_quota_slots",
                                               "idempotency_bindings")) {
                try (ResultSet row = statement.executeQuery("SELECT t::text, " + (table.equals("decisions")
                        ? "convert_from(t.body, 'UTF8')" : "''") + " FROM " + table + " t")) {
                    while (row.next()) {
                        rows.add(row.getString(1) + " " + row.getString(2));
                    }
                }
            }
        }
        assertThat(rows.size(), greaterThan(3 * cards.length));
        for (String row : rows) {
            for (String card : cards) {
                assertThat(row, row.contains(card), is(false));
            }
            assertThat(row, row.toLowerCase().contains("cvc"), is(false));
            assertThat(row, row.contains("\"" + cvc + "\""), is(false));
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
                        .timeout(Duration.ofSeconds(60))
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

    private static double invocations() throws Exception {
        return MetricsScrape.of(replicaA.healthPort()).sum("authorizer_invocations_total")
               + MetricsScrape.of(replicaB.healthPort()).sum("authorizer_invocations_total");
    }

    private static String authorizations(ServiceProcess replica) {
        return "http://127.0.0.1:" + replica.businessPort() + "/v1/authorizations";
    }
}
