package com.example.payments;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;

import com.example.payments.http.Json;
import com.example.payments.issuer.IssuerStats;
import com.example.payments.testing.Http;
import com.example.payments.testing.IssuerSimulatorProcess;
import com.example.payments.testing.MetricsScrape;
import com.example.payments.testing.PostgresServer;
import com.example.payments.testing.ServiceProcess;
import com.fasterxml.jackson.databind.JsonNode;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.greaterThanOrEqualTo;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.lessThanOrEqualTo;

/**
 * Unknown outcomes against the built jar on PostgreSQL and a real issuer simulator process, with
 * {@code authorizer.timeout: PT2S} and {@code authorizer.unknown-outcome.reverse-after: PT2S}: the simulator is
 * stopped ({@code SIGSTOP}) while a request waits for it, so the client gets 504, then resumed, so the issuer approves
 * the call it held (or, when the reconciler's reversal gets there first, declines it: the reversal's tombstone). Not
 * retried, the attempt holds no approval at the issuer (reversed once, or declined) and the authorization becomes
 * {@code REVERSED} (a later retry replays {@code 201 DECLINED reversed}); retried before the deadline, the retry's
 * answer stands and nothing is reversed.
 */
class UnknownOutcomeIT {

    private static final Duration TIMEOUT = Duration.ofSeconds(2);
    private static final Duration REVERSE_AFTER = Duration.ofSeconds(2);

    private static PostgresServer postgres;
    private static IssuerSimulatorProcess issuer;
    private static ServiceProcess service;

    @BeforeAll
    static void start() throws Exception {
        PostgresServer.assumeInstalled();
        postgres = PostgresServer.start();
        issuer = IssuerSimulatorProcess.start(Map.of());
        service = ServiceProcess.start(Map.of("authorizer.type", "http", "authorizer.http.uri", issuer.uri(),
                "authorizer.timeout", TIMEOUT.toString(),
                "authorizer.unknown-outcome.reverse-after", REVERSE_AFTER.toString(),
                "idempotency.store", "postgres", "database.url", postgres.url(),
                "database.username", PostgresServer.USER,
                "idempotency.fingerprint-secret", "it-test-fingerprint-secret"));
        service.awaitReady(Duration.ofSeconds(30));
    }

    @AfterAll
    static void stop() {
        if (service != null) {
            service.close();
        }
        if (issuer != null) {
            issuer.close();
        }
        if (postgres != null) {
            postgres.close();
        }
    }

    @Test
    void aTimedOutAuthorizationNobodyRetriesIsReversedOnceAndItsRetryReplaysTheReversal() throws Exception {
        IssuerStats before = issuer.stats();
        String key = UUID.randomUUID().toString();
        assertThat(timedOut(key).statusCode(), is(504));
        // Resumed, the issuer approves the call it held: a hold the client knows nothing about. On a loaded machine
        // the reconciler's reversal may reach the issuer first: its tombstone then declines the late call.
        issuer.awaitStats(stats -> stats.authorizations() > before.authorizations(), Duration.ofSeconds(20));
        IssuerStats reversed = issuer.awaitStats(stats -> stats.reversals() > before.reversals()
                                                          || stats.declined() > before.declined(),
                                                 Duration.ofSeconds(30));
        // The reconciler may still hold the key, recording the reversal: 409 with Retry-After, as for any retry.
        HttpResponse<String> retry = post(key);
        for (int i = 0; i < 20 && retry.statusCode() == 409; i++) {
            Thread.sleep(250);
            retry = post(key);
        }
        assertThat(retry.body(), retry.statusCode(), is(201));
        assertThat(retry.headers().firstValue("Idempotent-Replayed").orElse(""), is("true"));
        JsonNode replayed = Json.mapper().readTree(retry.body());
        assertThat(replayed.get("status").asText(), is("DECLINED"));
        assertThat(replayed.get("declineCode").asText(), is("reversed"));
        JsonNode current = Json.mapper().readTree(Http.get(base() + "/" + replayed.get("id").asText()).body());
        assertThat(current.get("state").asText(), is("REVERSED"));

        Thread.sleep(REVERSE_AFTER.plusSeconds(2).toMillis());
        IssuerStats after = issuer.stats();
        assertThat("the attempt holds no approval: reversed once, or declined after its reversal",
                   (after.approved() - after.reversals()) - (before.approved() - before.reversals()), is(0L));
        assertThat("at most one reversal of the attempt", after.reversals() - before.reversals(),
                   lessThanOrEqualTo(1L));
        assertThat("the retry replayed: no call reached the issuer", after.requests(), is(reversed.requests()));
        assertThat("no payment holds two approvals", after.paymentsApprovedTwiceNet(), is(0L));
        assertThat(MetricsScrape.of(service.healthPort()).sum("unknown_outcomes_total",
                Map.of("resolution", "reversed")), greaterThanOrEqualTo(1.0));
    }

    @Test
    void aTimedOutAuthorizationRetriedBeforeTheDeadlineKeepsTheRetrysAnswerAndIsNotReversed() throws Exception {
        IssuerStats before = issuer.stats();
        String key = UUID.randomUUID().toString();
        assertThat(timedOut(key).statusCode(), is(504));
        issuer.awaitStats(stats -> stats.approved() > before.approved(), Duration.ofSeconds(20));

        HttpResponse<String> retry = post(key);
        assertThat(retry.body(), retry.statusCode(), is(201));
        JsonNode answer = Json.mapper().readTree(retry.body());
        assertThat(answer.get("status").asText(), is("APPROVED"));

        // Past the deadline and a few reconciler runs: the reconciler's claim finds the retry's decision.
        Thread.sleep(REVERSE_AFTER.plusSeconds(4).toMillis());
        IssuerStats after = issuer.stats();
        assertThat("no reversal", after.reversals(), is(before.reversals()));
        JsonNode current = Json.mapper().readTree(Http.get(base() + "/" + answer.get("id").asText()).body());
        assertThat(current.get("state").asText(), is("APPROVED"));
        HttpResponse<String> replay = post(key);
        assertThat(replay.body(), is(retry.body()));
        assertThat(MetricsScrape.of(service.healthPort()).sum("unknown_outcomes_total",
                Map.of("resolution", "retried")), greaterThanOrEqualTo(1.0));
        assertThat(MetricsScrape.of(service.healthPort()).sum("worker_heartbeat_age_seconds",
                Map.of("worker", "unknown-outcome-reconciler")) >= 0, is(true));
    }

    // The issuer stopped while the request waits for it: answered 504 at the timeout.
    private static HttpResponse<String> timedOut(String key) throws Exception {
        issuer.signal("STOP");
        try {
            return post(key);
        } finally {
            issuer.signal("CONT");
        }
    }

    private static HttpResponse<String> post(String key) throws Exception {
        return Http.post(base(), key, Http.VALID_BODY.replace("order-42", "order-" + key));
    }

    private static String base() {
        return "http://127.0.0.1:" + service.businessPort() + "/v1/authorizations";
    }
}
