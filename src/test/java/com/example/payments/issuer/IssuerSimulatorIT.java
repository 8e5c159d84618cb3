package com.example.payments.issuer;

import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;

import com.example.payments.testing.Http;
import com.example.payments.testing.IssuerSimulatorProcess;
import com.example.payments.testing.MetricsScrape;
import com.example.payments.testing.ServiceProcess;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.not;

/**
 * The issuer simulator as a process of its own, started from the jar with {@code java -cp} (the thin jar's manifest
 * brings its libraries): its API, its ledger over the wire, its stats and metrics, and its configuration errors.
 */
class IssuerSimulatorIT {

    private static IssuerSimulatorProcess issuer;

    @BeforeAll
    static void startSimulator() throws Exception {
        issuer = IssuerSimulatorProcess.start(Map.of("issuer.default-limit", "5000"));
    }

    @AfterAll
    static void stopSimulator() {
        if (issuer != null) {
            issuer.close();
        }
    }

    private static HttpResponse<String> call(String attemptId, String card, long amount) throws Exception {
        String body = """
                {"merchantId":"m_123","reference":"order-%s","amount":{"value":%d,"currency":"EUR"},
                 "card":{"number":"%s","expiryMonth":12,"expiryYear":2030,"cvc":"737"}}""".formatted(attemptId, amount,
                                                                                                  card);
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(issuer.uri() + "/v1/authorizations"))
                .timeout(Duration.ofSeconds(20))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body));
        if (attemptId != null) {
            request.header("Idempotency-Key", attemptId);
        }
        return Http.client().send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static String attemptId() {
        return "att_" + UUID.randomUUID().toString().replace("-", "");
    }

    @Test
    void aRepeatedAttemptIdIsAnsweredFromTheLedgerAndCountedOnce() throws Exception {
        IssuerStats before = issuer.stats();
        String attempt = attemptId();
        HttpResponse<String> first = call(attempt, "4111111111111111", 1299);
        HttpResponse<String> retry = call(attempt, "4111111111111111", 1299);

        assertThat(first.statusCode(), is(200));
        assertThat(first.body(), first.body().matches("\\{\"attemptId\":\"" + attempt + "\",\"status\":\"APPROVED\","
                                                + "\"decidedAt\":\"\\d{4}-\\d\\d-\\d\\dT[0-9:.]+Z\"}"), is(true));
        assertThat(first.headers().firstValue("Idempotent-Replayed").isPresent(), is(false));
        assertThat(retry.body(), is(first.body()));
        assertThat(retry.headers().firstValue("Idempotent-Replayed").orElse(""), is("true"));
        IssuerStats after = issuer.stats();
        assertThat(after.authorizations() - before.authorizations(), is(1L));
        assertThat(after.duplicateAttempts() - before.duplicateAttempts(), is(1L));
        assertThat(after.paymentsApprovedMoreThanOnce(), is(before.paymentsApprovedMoreThanOnce()));
        MetricsScrape metrics = issuer.metrics();
        assertThat(metrics.sum("issuer_authorizations_total", Map.of("decision", "approved")),
                   is((double) after.approved()));
        assertThat(metrics.sum("issuer_duplicate_attempts_total"), is((double) after.duplicateAttempts()));
    }

    @Test
    void theTestCardsAndTheLimitDecide() throws Exception {
        assertThat(call(attemptId(), "4000000000000002", 10).body(), containsString("\"declineCode\":\"card_declined\""));
        assertThat(call(attemptId(), "4000000000009995", 10).body(),
                   containsString("\"declineCode\":\"insufficient_funds\""));
        assertThat(call(attemptId(), "5555555555554444", 5001).body(),
                   containsString("\"declineCode\":\"limit_exceeded\""));
        assertThat(call(attemptId(), "5555555555554444", 5000).body(), containsString("\"status\":\"APPROVED\""));
    }

    @Test
    void theUnreachableCardAnswers503AndIsNotRecorded() throws Exception {
        IssuerStats before = issuer.stats();
        String attempt = attemptId();
        HttpResponse<String> response = call(attempt, "4000000000000119", 10);
        call(attempt, "4000000000000119", 10);

        assertThat(response.statusCode(), is(503));
        assertThat(response.headers().firstValue("Content-Type").orElse(""), is("application/problem+json"));
        assertThat(response.headers().firstValue("Retry-After").orElse(""), is("1"));
        IssuerStats after = issuer.stats();
        assertThat(after.unavailable() - before.unavailable(), is(2L));
        assertThat(after.duplicateAttempts(), is(before.duplicateAttempts()));
    }

    @Test
    void aCallWithoutAnAttemptIdOrWithABadFieldIs400NamingItWithoutEchoingTheCard() throws Exception {
        HttpResponse<String> noKey = call(null, "4111111111111111", 10);
        HttpResponse<String> badAmount = call(attemptId(), "4111111111111111", 0);
        HttpResponse<String> notJson = Http.client().send(HttpRequest.newBuilder(
                        URI.create(issuer.uri() + "/v1/authorizations"))
                .header("Idempotency-Key", attemptId())
                .POST(HttpRequest.BodyPublishers.ofString("{\"card\":{\"number\":4111111111111111")).build(),
                HttpResponse.BodyHandlers.ofString());

        assertThat(noKey.statusCode(), is(400));
        assertThat(noKey.body(), containsString("\"header\":\"Idempotency-Key\""));
        assertThat(badAmount.statusCode(), is(400));
        assertThat(badAmount.body(), containsString("\"pointer\":\"#/amount/value\""));
        assertThat(notJson.statusCode(), is(400));
        assertThat(notJson.body(), not(containsString("4111")));
    }

    @Test
    void noCardNumberIsEverLogged() throws Exception {
        call(attemptId(), "4111111111111111", 1299);
        call(attemptId(), "4000000000000119", 1299);
        for (String line : issuer.output()) {
            assertThat(line, not(containsString("4111111111111111")));
            assertThat(line, not(containsString("4000000000000119")));
        }
    }

    @Test
    void aConfigurationMistakeStopsTheSimulatorWithOneLineAndExitStatus2() throws Exception {
        ServiceProcess.Exited exited = IssuerSimulatorProcess.runToExit(Map.of("issuer.simulated-latency", "2s"));
        assertThat(exited.status(), is(2));
        assertThat(exited.output(), hasItem("Invalid configuration: issuer.simulated-latency: '2s' is not an "
                                            + "ISO-8601 duration; allowed: a duration >= PT0S, e.g. PT5S"));
    }

    @Test
    void aPortInUseStopsTheSimulatorWithExitStatus2() throws Exception {
        try (ServerSocket taken = new ServerSocket(0)) {
            ServiceProcess.Exited exited = IssuerSimulatorProcess.runToExit(
                    Map.of("issuer.port", String.valueOf(taken.getLocalPort())));
            assertThat(exited.status(), is(2));
            assertThat(exited.output(), hasItem("Invalid configuration: issuer.port: cannot listen on port "
                                                + taken.getLocalPort() + " (in use, or not permitted); allowed: a "
                                                + "free port from 0 to 65535"));
        }
    }
}
