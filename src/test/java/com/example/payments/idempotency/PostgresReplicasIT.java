package com.example.payments.idempotency;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import com.example.payments.testing.Http;
import com.example.payments.testing.MetricsScrape;
import com.example.payments.testing.ServiceProcess;

import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;

/**
 * {@link SeveralReplicasContract} on the PostgreSQL backend, where every table is scanned for card data; and what
 * only it promises: a replica started afterwards replays every completed key from the database, its pool metrics, and
 * the pool closed at SIGTERM.
 */
class PostgresReplicasIT extends SeveralReplicasContract {

    PostgresReplicasIT() {
        super(Duration.ofSeconds(60), Duration.ofSeconds(60));
    }

    @Override
    StoreBackend startBackend() {
        // Two busy cores: generous bounds, still within the lease floor (PT20S > 5 s + 2 x (2 + 3 + 0.25) s).
        return StoreBackend.onPostgres(Map.of("idempotency.store", "postgres",
                      "database.statement-timeout", "PT3S",
                      "database.lock-timeout", "PT2S",
                      "database.connection-timeout", "PT2S",
                      "idempotency.in-flight-lease", "PT20S",
                      "shutdown.drain-timeout", "PT20S",
                      "shutdown.hard-deadline", "PT40S"));
    }

    @Override
    List<List<String>> backendValues() {
        return List.of();
    }

    // 503 store-unavailable (nothing done, Retry-After) is failing closed when an overloaded machine makes a request
    // wait longer than database.connection-timeout for a pooled connection; never a second decision.
    @Override
    List<Integer> contendedStatuses() {
        return List.of(201, 409, 503);
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
        try (ServiceProcess restarted = ServiceProcess.start(config)) {
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
}
