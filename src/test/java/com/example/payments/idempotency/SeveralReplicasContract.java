package com.example.payments.idempotency;

import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import com.example.payments.testing.Http;
import com.example.payments.testing.MetricsScrape;
import com.example.payments.testing.PostgresDatabase;
import com.example.payments.testing.PostgresServer;
import com.example.payments.testing.ServiceProcess;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.isIn;

/**
 * Two service processes on different ports sharing one store, over the wire, run on each backend by a subclass that
 * starts the store: the headline promise (no card authorized twice) holds across replicas with one row in the
 * PostgreSQL system of record, a retry on the other replica replays, GET works on either, a key of all 255 printable
 * characters replays across replicas, and nothing the stores hold carries a card number or a CVC.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class SeveralReplicasContract {

    private static final String[] CARDS = {"4111111111111111", "5555555555554444", "4000000000000002",
                                           "4000000000009995"};
    private static final String CVC = "7391";
    private static final List<String> TABLES = List.of("idempotency_records", "decisions", "authorizations",
                                                       "merchant_quota_slots", "idempotency_bindings");

    private final Duration readyWithin;
    private final Duration answerWithin;
    /** The system of record, behind every backend: the authorizations live there, so either replica reads them. */
    PostgresServer postgres;
    /** What each replica runs with. */
    Map<String, String> config;
    private StoreBackend backend;
    ServiceProcess replicaA;
    ServiceProcess replicaB;

    /**
     * @param readyWithin  how long each replica may take to become ready (s)
     * @param answerWithin how long each of the concurrent requests may take (s)
     */
    SeveralReplicasContract(Duration readyWithin, Duration answerWithin) {
        this.readyWithin = readyWithin;
        this.answerWithin = answerWithin;
    }

    /**
     * Starts the backend's own servers besides PostgreSQL (skipping the class when one is not installed).
     *
     * @return the replicas' configuration of the backend, and its servers
     * @throws Exception when a server does not start
     */
    abstract StoreBackend startBackend() throws Exception;

    /**
     * What the backend's own servers hold besides PostgreSQL's tables, as text (keys, fields, values).
     *
     * @return one list per server, none for a backend that keeps everything in PostgreSQL
     */
    abstract List<List<String>> backendValues();

    /**
     * The statuses the concurrent identical requests may get: a replay (201) or in flight (409), and wherever the
     * backend may fail closed when a request waits too long for it, 503 {@code store-unavailable}.
     *
     * @return the accepted statuses
     */
    abstract List<Integer> contendedStatuses();

    @BeforeAll
    void startTwoReplicas() throws Exception {
        PostgresServer.assumeInstalled();
        backend = startBackend();
        config = new HashMap<>(backend.config());
        postgres = PostgresServer.start();
        config.put("idempotency.fingerprint-secret", "it-test-fingerprint-secret");
        config.put("database.url", postgres.url());
        config.put("database.username", PostgresServer.USER);
        replicaA = ServiceProcess.start(config);
        replicaB = ServiceProcess.start(config);
        replicaA.awaitReady(readyWithin);
        replicaB.awaitReady(readyWithin);
        warmUp(replicaA);
        warmUp(replicaB);
    }

    // A JVM that just started runs interpreted code; production replicas are warm when a burst comes.
    private static void warmUp(ServiceProcess replica) {
        try (ExecutorService threads = Executors.newFixedThreadPool(8)) {
            for (int i = 0; i < 200; i++) {
                threads.submit(() -> Http.post(authorizations(replica), UUID.randomUUID().toString(), Http.VALID_BODY));
            }
        }
    }

    @AfterAll
    void stopAll() throws Exception {
        StoreBackend servers = backend;
        PostgresServer database = postgres;
        try (servers; database; ServiceProcess a = replicaA; ServiceProcess b = replicaB) {
            // closed in reverse order: the replicas first
        }
    }

    @Test
    void fiveHundredConcurrentIdenticalRequestsOnTwoReplicasMakeOneAuthorization() throws Exception {
        double before = invocations();
        String key = UUID.randomUUID().toString();
        List<HttpResponse<String>> responses = Http.postAtOnce(IntStream.range(0, 500).mapToObj(
                i -> authorizations(i % 2 == 0 ? replicaA : replicaB)).toList(), key, Http.VALID_BODY, answerWithin);

        Map<String, Long> statuses = responses.stream().collect(Collectors.groupingBy(
                r -> r.statusCode() + " " + r.body().replaceAll("\"detail\".*", ""), Collectors.counting()));
        assertThat("statuses " + statuses, invocations() - before, is(1.0));
        List<HttpResponse<String>> originals = responses.stream()
                .filter(r -> r.statusCode() == 201 && r.headers().firstValue("Idempotent-Replayed").isEmpty())
                .toList();
        assertThat("statuses " + statuses, originals.size(), is(1));
        String original = originals.getFirst().body();
        for (HttpResponse<String> response : responses) {
            assertThat(response.statusCode() + " " + response.body() + "\n" + warnings(), response.statusCode(),
                       isIn(contendedStatuses()));
            if (response.statusCode() == 503) {
                assertThat(response.body(), containsString("store-unavailable"));
                assertThat(response.headers().firstValue("Retry-After").isPresent(), is(true));
            }
            if (response.statusCode() == 201) {
                assertThat(response.body(), is(original));
            }
        }
        String id = original.replaceAll(".*\"id\":\"([^\"]+)\".*", "$1");
        assertThat(PostgresDatabase.query(postgres, "SELECT count(*) || ' ' || min(status) || ' ' || min(last_four) "
                   + "|| ' ' || min(amount) FROM authorizations WHERE attempt_id = (SELECT attempt_id FROM "
                   + "authorizations WHERE id = '" + id + "'::uuid)"), is("1 APPROVED 1111 1299"));
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
    void nothingTheStoresHoldCarriesACardNumberOrCvc() throws Exception {
        for (String card : CARDS) {
            String body = Http.VALID_BODY.replace("4111111111111111", card).replace("\"123\"", "\"" + CVC + "\"");
            assertThat(Http.post(authorizations(replicaA), UUID.randomUUID().toString(), body).statusCode(), is(201));
        }
        List<List<String>> stores = new ArrayList<>(backendValues());
        stores.add(rows());
        for (List<String> values : stores) {
            assertThat(values.size(), greaterThan(3 * CARDS.length));
            for (String value : values) {
                for (String card : CARDS) {
                    assertThat(value, value.contains(card), is(false));
                }
                assertThat(value, value.toLowerCase().contains("cvc"), is(false));
                assertThat(value, value.contains("\"" + CVC + "\"") || RedisScan.hasJsonValue(value, CVC), is(false));
            }
        }
    }

    // Every row of every table the stores write, and the decision bodies as text.
    private List<String> rows() throws Exception {
        List<String> rows = new ArrayList<>();
        try (Connection connection = postgres.connect(); Statement statement = connection.createStatement()) {
            for (String table : TABLES) {
                try (ResultSet row = statement.executeQuery("SELECT t::text, " + (table.equals("decisions")
                        ? "convert_from(t.body, 'UTF8')" : "''") + " FROM " + table + " t")) {
                    while (row.next()) {
                        rows.add(row.getString(1) + " " + row.getString(2));
                    }
                }
            }
        }
        return rows;
    }

    private String warnings() {
        List<String> lines = new ArrayList<>();
        for (ServiceProcess replica : List.of(replicaA, replicaB)) {
            replica.output().stream().filter(line -> line.contains(" WARN ") || line.contains(" ERROR "))
                    .limit(20).forEach(lines::add);
        }
        return String.join("\n", lines);
    }

    private double invocations() throws Exception {
        return MetricsScrape.of(replicaA.healthPort()).sum("authorizer_invocations_total")
               + MetricsScrape.of(replicaB.healthPort()).sum("authorizer_invocations_total");
    }

    static String authorizations(ServiceProcess replica) {
        return "http://127.0.0.1:" + replica.businessPort() + "/v1/authorizations";
    }
}
