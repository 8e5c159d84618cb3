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
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;

import com.example.payments.testing.Http;
import com.example.payments.testing.PostgresServer;
import com.example.payments.testing.ServiceProcess;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.empty;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.isOneOf;
import static org.hamcrest.Matchers.lessThan;

/**
 * The database crashing ({@code kill -9} of the postmaster) while requests are in flight, the database down at
 * startup, and the configuration mistakes only the database can reveal: the service fails closed (no authorization
 * without the system of record), keeps liveness, leaves the load balancer through readiness naming
 * {@code database}, and comes back by itself; no key stays claimed longer than a lease; credentials and database
 * names the server refuses stop it with exit status 2.
 */
class PostgresOutageIT {

    // authorizer.timeout PT3S + 2 x (connection 1 s + statement 1 s + 0.25 s) = 7.5 s < the lease.
    private static final Duration LEASE = Duration.ofSeconds(8);

    /** One poll: when it was sent (ms since the crash), what came back. */
    private record Sample(long atMillis, int status, String body, boolean retryAfter) {
    }

    @BeforeEach
    void requirePostgres() {
        PostgresServer.assumeInstalled();
    }

    private static Map<String, String> config(PostgresServer postgres) {
        Map<String, String> config = new HashMap<>();
        config.put("idempotency.store", "postgres");
        config.put("idempotency.fingerprint-secret", "it-test-fingerprint-secret");
        config.put("database.url", postgres.url());
        config.put("database.username", PostgresServer.USER);
        config.put("database.statement-timeout", "PT1S");
        config.put("database.connection-timeout", "PT1S");
        config.put("authorizer.timeout", "PT3S");
        config.put("idempotency.in-flight-lease", "PT" + LEASE.toSeconds() + "S");
        return config;
    }

    @Test
    void killingTheDatabaseMidRequestFailsClosedKeepsLivenessAndRecoversWithoutARestart() throws Exception {
        try (PostgresServer postgres = PostgresServer.start()) {
            Map<String, String> config = config(postgres);
            // Holds each authorization in flight for 2 s, so that the crash lands between claim and recording.
            config.put("authorizer.simulated-latency", "PT2S");
            try (ServiceProcess service = ServiceProcess.start(config)) {
                service.awaitReady(Duration.ofSeconds(60));
                assertThat(post(service, UUID.randomUUID().toString()).statusCode(), is(201));

                List<String> keys = new ArrayList<>();
                List<Future<HttpResponse<String>>> inFlight = new ArrayList<>();
                List<Sample> live = new CopyOnWriteArrayList<>();
                AtomicBoolean polling = new AtomicBoolean(true);
                long crash;
                Thread liveness;
                try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
                    for (int i = 0; i < 5; i++) {
                        String key = UUID.randomUUID().toString();
                        keys.add(key);
                        inFlight.add(threads.submit(() -> post(service, key)));
                    }
                    awaitInFlight(postgres, keys.size());
                    crash = System.nanoTime();
                    liveness = Thread.ofVirtual().start(() -> poll(polling, crash, live,
                            () -> Http.get(health(service) + "/health/live")));
                    postgres.kill();
                }
                for (Future<HttpResponse<String>> cut : inFlight) {
                    HttpResponse<String> response = cut.get();
                    // The decision could not be written: outcome unknown, retryable; never a 201 nor a 500.
                    assertThat(response.body(), response.statusCode(), isOneOf(503, 504));
                    assertThat(response.headers().firstValue("Retry-After").isPresent(), is(true));
                }

                Sample ready = awaitStatus(crash, () -> Http.get(health(service) + "/health/ready"), 503,
                                           "database", Duration.ofSeconds(10));
                assertThat(ready.body(), containsString("database"));
                Sample refused = sample(crash, post(service, UUID.randomUUID().toString()));
                assertThat(refused.body(), refused.status(), is(503));
                assertThat(refused.retryAfter(), is(true));

                postgres.restart();
                long back = System.nanoTime();
                Sample created = awaitStatus(back, () -> post(service, UUID.randomUUID().toString()), 201,
                                             Duration.ofSeconds(30));
                assertThat(awaitStatus(back, () -> Http.get(health(service) + "/health/ready"), 200,
                                       Duration.ofSeconds(10)).status(), is(200));

                // No lease reaches further than one lease from now (the crash kept the claims, not longer ones).
                assertThat(scalar(postgres, "SELECT count(*) FROM idempotency_records WHERE state = 'in_flight' AND "
                                            + "lease_expires_at > clock_timestamp() + interval '" + LEASE.toSeconds()
                                            + " seconds'"), is("0"));
                // Every key cut off by the crash is answered 201 once its lease has run out at the latest.
                for (String key : keys) {
                    Sample retried = awaitStatus(crash, () -> post(service, key), 201,
                                                 LEASE.plus(Duration.ofSeconds(30)));
                    assertThat("key claimed longer than a lease: " + retried.atMillis() + " ms after the crash",
                               retried.atMillis(), lessThan(Duration.ofNanos(back - crash).plus(LEASE)
                                                                    .plusSeconds(15).toMillis()));
                }
                polling.set(false);
                liveness.join();
                assertThat(live.size() > 5, is(true));
                assertThat(live.stream().filter(s -> s.status() != 200).toList(), is(empty()));
                assertThat(created.status(), is(201));
                assertThat(service.alive(), is(true));
            }
        }
    }

    @Test
    void withTheDatabaseDownAtStartupTheServiceStartsUnreadyAndBecomesReadyWhenItComesUp() throws Exception {
        try (PostgresServer postgres = PostgresServer.start()) {
            postgres.stop();
            try (ServiceProcess service = ServiceProcess.start(config(postgres))) {
                long start = System.nanoTime();
                // Starting first (503 "starting"), then started and unready, naming the database.
                Sample ready = awaitStatus(start, () -> Http.get(health(service) + "/health/ready"), 503,
                                           "database", Duration.ofSeconds(30));
                assertThat(ready.body(), containsString("database: schema not migrated yet"));
                assertThat(Http.get(health(service) + "/health/live").statusCode(), is(200));
                Sample refused = sample(start, post(service, UUID.randomUUID().toString()));
                assertThat(refused.body(), refused.status(), is(503));

                postgres.restart();
                service.awaitReady(Duration.ofSeconds(60));
                assertThat(post(service, UUID.randomUUID().toString()).statusCode(), is(201));
                assertThat(scalar(postgres, "SELECT count(*) FROM authorizations"), is("1"));
            }
        }
    }

    @Test
    void aRoleOrDatabaseTheServerRefusesStopsTheServiceWithExitStatus2() throws Exception {
        try (PostgresServer postgres = PostgresServer.start()) {
            Map<String, String> noRole = config(postgres);
            noRole.put("database.username", "no_such_role");
            ServiceProcess.Exited exited = ServiceProcess.runToExit(noRole, Map.of());
            assertThat(String.join("\n", exited.output()), exited.status(), is(2));
            assertThat(String.join("\n", exited.output()),
                       containsString("Invalid configuration: database.username: the database refused the role"));

            Map<String, String> noDatabase = config(postgres);
            noDatabase.put("database.url", postgres.url("no_such_database"));
            exited = ServiceProcess.runToExit(noDatabase, Map.of());
            assertThat(String.join("\n", exited.output()), exited.status(), is(2));
            assertThat(String.join("\n", exited.output()),
                       containsString("Invalid configuration: database.url: the database named in the URL does not "
                                      + "exist"));
        }
    }

    private static void awaitInFlight(PostgresServer postgres, int count) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        String held = "";
        while (System.nanoTime() < deadline) {
            held = scalar(postgres, "SELECT count(*) FROM idempotency_records WHERE state = 'in_flight'");
            if (Integer.parseInt(held) >= count) {
                return;
            }
            Thread.sleep(20);
        }
        throw new AssertionError("Only " + held + " of " + count + " requests claimed their key");
    }

    private static String scalar(PostgresServer postgres, String sql) throws Exception {
        try (Connection connection = postgres.connect(); Statement statement = connection.createStatement();
             ResultSet row = statement.executeQuery(sql)) {
            row.next();
            return row.getString(1);
        }
    }

    private static Sample awaitStatus(long start, Probe probe, int status, Duration timeout) throws Exception {
        return awaitStatus(start, probe, status, "", timeout);
    }

    private static Sample awaitStatus(long start, Probe probe, int status, String body, Duration timeout)
            throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        Sample last = null;
        while (System.nanoTime() < deadline) {
            try {
                last = sample(start, probe.get());
                if (last.status() == status && last.body().contains(body)) {
                    return last;
                }
            } catch (java.io.IOException e) {
                last = new Sample(millisSince(start), -1, e.toString(), false);
            }
            Thread.sleep(200);
        }
        throw new AssertionError("No " + status + " within " + timeout + "; last: " + last);
    }

    private static void poll(AtomicBoolean polling, long start, List<Sample> samples, Probe probe) {
        while (polling.get()) {
            try {
                samples.add(sample(start, probe.get()));
                Thread.sleep(200);
            } catch (Exception e) {
                samples.add(new Sample(millisSince(start), -1, e.toString(), false));
            }
        }
    }

    private static Sample sample(long start, HttpResponse<String> response) {
        return new Sample(millisSince(start), response.statusCode(), response.body(),
                          response.headers().firstValue("Retry-After").isPresent());
    }

    private static long millisSince(long start) {
        return Duration.ofNanos(System.nanoTime() - start).toMillis();
    }

    private static HttpResponse<String> post(ServiceProcess service, String key) throws Exception {
        return Http.post("http://127.0.0.1:" + service.businessPort() + "/v1/authorizations", key, Http.VALID_BODY);
    }

    private static String health(ServiceProcess service) {
        return "http://127.0.0.1:" + service.healthPort();
    }

    @FunctionalInterface
    private interface Probe {
        HttpResponse<String> get() throws Exception;
    }
}
