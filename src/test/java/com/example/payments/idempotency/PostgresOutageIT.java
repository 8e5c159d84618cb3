package com.example.payments.idempotency;

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

import com.example.payments.testing.Http;
import com.example.payments.testing.PostgresServer;
import com.example.payments.testing.ServiceProcess;

import org.junit.jupiter.api.Test;

import static com.example.payments.testing.PostgresDatabase.query;
import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.isOneOf;
import static org.hamcrest.Matchers.lessThan;

/**
 * {@link StoreOutageContract} on the PostgreSQL backend: the database crashes ({@code kill -9} of the postmaster)
 * while requests are in flight, which are answered as retryable with their outcome unknown, and no key stays claimed
 * longer than a lease. And what only the database can do: be down at startup (the service starts unready, naming
 * {@code database}, and becomes ready when it comes up), and refuse the configured role or database name (exit
 * status 2).
 */
class PostgresOutageIT extends StoreOutageContract {

    // authorizer.timeout PT3S + 2 x (connection 1 s + statement 1 s + 0.25 s) = 7.5 s < the lease.
    private static final Duration LEASE = Duration.ofSeconds(8);

    /** The keys of the requests the crash cut off. */
    private final List<String> cut = new ArrayList<>();

    private static Map<String, String> backend() {
        return Map.of("idempotency.store", "postgres",
                      "database.statement-timeout", "PT1S",
                      "database.connection-timeout", "PT1S",
                      "authorizer.timeout", "PT3S",
                      "idempotency.in-flight-lease", "PT" + LEASE.toSeconds() + "S");
    }

    private static Map<String, String> config(PostgresServer postgres) {
        Map<String, String> config = new HashMap<>(backend());
        config.put("idempotency.fingerprint-secret", "it-test-fingerprint-secret");
        config.put("database.url", postgres.url());
        config.put("database.username", PostgresServer.USER);
        return config;
    }

    @Override
    Expectations expectations() {
        return new Expectations("database", Duration.ofSeconds(60),
                                Duration.ofSeconds(10),   // readiness: a call that succeeded within 1 s still counts
                                Duration.ZERO,            // one POST refused
                                503,                      // GET reads the database too
                                Duration.ofSeconds(30),   // the server restarts, the pool reconnects
                                5);
    }

    @Override
    StoreBackend startBackend() {
        Map<String, String> config = new HashMap<>(backend());
        // Holds each authorization in flight for 2 s, so that the crash lands between claim and recording.
        config.put("authorizer.simulated-latency", "PT2S");
        return StoreBackend.onPostgres(config);
    }

    @Override
    void takeDown(ServiceProcess service) throws Exception {
        List<Future<HttpResponse<String>>> inFlight = new ArrayList<>();
        try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int i = 0; i < 5; i++) {
                String key = UUID.randomUUID().toString();
                cut.add(key);
                inFlight.add(threads.submit(() -> post(service, key)));
            }
            awaitInFlight(cut.size());
            postgres.kill();
        }
        for (Future<HttpResponse<String>> request : inFlight) {
            HttpResponse<String> response = request.get();
            // The decision could not be written: outcome unknown, retryable; never a 201 nor a 500.
            assertThat(response.body(), response.statusCode(), isOneOf(503, 504));
            assertThat(response.headers().firstValue("Retry-After").isPresent(), is(true));
        }
    }

    @Override
    void bringBack() throws Exception {
        postgres.restart();
    }

    @Override
    void afterRecovery(ServiceProcess service, long outage, long back, Sample recovered) throws Exception {
        // No lease reaches further than one lease from now (the crash kept the claims, not longer ones).
        assertThat(query(postgres, "SELECT count(*) FROM idempotency_records WHERE state = 'in_flight' AND "
                                   + "lease_expires_at > clock_timestamp() + interval '" + LEASE.toSeconds()
                                   + " seconds'"), is("0"));
        // Every key cut off by the crash is answered 201 once its lease has run out at the latest.
        for (String key : cut) {
            Sample retried = awaitStatus(outage, () -> post(service, key), 201, "", LEASE.plus(Duration.ofSeconds(30)));
            assertThat("key claimed longer than a lease: " + retried.atMillis() + " ms after the outage began",
                       retried.atMillis(), lessThan(Duration.ofNanos(back - outage).plus(LEASE)
                                                            .plusSeconds(15).toMillis()));
        }
    }

    @Test
    void withTheDatabaseDownAtStartupTheServiceStartsUnreadyAndBecomesReadyWhenItComesUp() throws Exception {
        try (PostgresServer server = PostgresServer.start()) {
            server.stop();
            try (ServiceProcess service = ServiceProcess.start(config(server))) {
                long start = System.nanoTime();
                // Starting first (503 "starting"), then started and unready, naming the database.
                Sample ready = awaitStatus(start, () -> Http.get(health(service) + "/health/ready"), 503,
                                           "database", Duration.ofSeconds(30));
                assertThat(ready.body(), containsString("database: schema not migrated yet"));
                assertThat(Http.get(health(service) + "/health/live").statusCode(), is(200));
                Sample refused = sample(start, post(service, UUID.randomUUID().toString()));
                assertThat(refused.body(), refused.status(), is(503));

                server.restart();
                service.awaitReady(Duration.ofSeconds(60));
                assertThat(post(service, UUID.randomUUID().toString()).statusCode(), is(201));
                assertThat(query(server, "SELECT count(*) FROM authorizations"), is("1"));
            }
        }
    }

    @Test
    void aRoleOrDatabaseTheServerRefusesStopsTheServiceWithExitStatus2() throws Exception {
        try (PostgresServer server = PostgresServer.start()) {
            Map<String, String> noRole = config(server);
            noRole.put("database.username", "no_such_role");
            ServiceProcess.Exited exited = ServiceProcess.runToExit(noRole, Map.of());
            assertThat(String.join("\n", exited.output()), exited.status(), is(2));
            assertThat(String.join("\n", exited.output()),
                       containsString("Invalid configuration: database.username: the database refused the role"));

            Map<String, String> noDatabase = config(server);
            noDatabase.put("database.url", server.url("no_such_database"));
            exited = ServiceProcess.runToExit(noDatabase, Map.of());
            assertThat(String.join("\n", exited.output()), exited.status(), is(2));
            assertThat(String.join("\n", exited.output()),
                       containsString("Invalid configuration: database.url: the database named in the URL does not "
                                      + "exist"));
        }
    }

    private void awaitInFlight(int count) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        String held = "";
        while (System.nanoTime() < deadline) {
            held = query(postgres, "SELECT count(*) FROM idempotency_records WHERE state = 'in_flight'");
            if (Integer.parseInt(held) >= count) {
                return;
            }
            Thread.sleep(20);
        }
        throw new AssertionError("Only " + held + " of " + count + " requests claimed their key");
    }
}
