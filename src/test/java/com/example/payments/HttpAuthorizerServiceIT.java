package com.example.payments;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;

import com.example.payments.issuer.IssuerStats;
import com.example.payments.testing.Http;
import com.example.payments.testing.IssuerSimulatorProcess;
import com.example.payments.testing.MetricsScrape;
import com.example.payments.testing.ServiceProcess;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.lessThan;
import static org.hamcrest.Matchers.not;

/**
 * The packaged service with {@code authorizer.type: http}, over the wire, against a real issuer simulator process:
 * what each issuer answer becomes for the client, a replay that never reaches the issuer, a retry after a timeout that
 * the service answers from the issuer's late decision (kept past the timeout), a dead issuer, and the issuer client
 * closed in the shutdown cleanup phase. The last three tests change the simulator or the service for good and run in
 * order, last.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class HttpAuthorizerServiceIT {

    // Long enough for a cold first call on two busy cores; the hung-issuer test still waits only this long.
    private static final Duration TIMEOUT = Duration.ofSeconds(5);

    private static IssuerSimulatorProcess issuer;
    private static ServiceProcess service;

    @BeforeAll
    static void startIssuerAndService() throws Exception {
        issuer = IssuerSimulatorProcess.start(Map.of());
        service = ServiceProcess.start(Map.of("authorizer.type", "http", "authorizer.http.uri", issuer.uri(),
                                              "authorizer.timeout", TIMEOUT.toString()));
        service.awaitReady(Duration.ofSeconds(30));
    }

    @AfterAll
    static void stopAll() {
        if (service != null) {
            service.close();
        }
        if (issuer != null) {
            issuer.close();
        }
    }

    // One business payment per key (its own reference): the issuer counts a payment approved under two attempt ids.
    private static HttpResponse<String> post(String key, String card) throws Exception {
        return Http.post("http://127.0.0.1:" + service.businessPort() + "/v1/authorizations", key,
                         Http.VALID_BODY.replace("4111111111111111", card).replace("order-42", "order-" + key));
    }

    private static String key() {
        return UUID.randomUUID().toString();
    }

    @Test
    void anApprovalIs201AndItsReplayNeverReachesTheIssuer() throws Exception {
        IssuerStats before = issuer.stats();
        String key = key();
        HttpResponse<String> first = post(key, "4111111111111111");
        HttpResponse<String> replay = post(key, "4111111111111111");

        assertThat(first.body(), first.statusCode(), is(201));
        assertThat(first.body(), containsString("\"status\":\"APPROVED\""));
        assertThat(replay.statusCode(), is(201));
        assertThat(replay.headers().firstValue("Idempotent-Replayed").orElse(""), is("true"));
        assertThat(replay.body(), is(first.body()));
        IssuerStats after = issuer.stats();
        assertThat("calls that reached the issuer", after.requests() - before.requests(), is(1L));
        assertThat(after.approved() - before.approved(), is(1L));
    }

    @Test
    void aDeclineIs201WithTheIssuersDeclineCode() throws Exception {
        HttpResponse<String> declined = post(key(), "4000000000000002");
        HttpResponse<String> noFunds = post(key(), "4000000000009995");

        assertThat(declined.statusCode(), is(201));
        assertThat(declined.body(), containsString("\"status\":\"DECLINED\",\"declineCode\":\"card_declined\""));
        assertThat(noFunds.body(), containsString("\"declineCode\":\"insufficient_funds\""));
    }

    @Test
    void anUnreachableIssuerIs502AndTheKeyIsReleasedForARetry() throws Exception {
        IssuerStats before = issuer.stats();
        String key = key();
        HttpResponse<String> first = post(key, "4000000000000119");
        HttpResponse<String> retry = post(key, "4000000000000119");

        assertThat(first.statusCode(), is(502));
        assertThat(first.body(), containsString("issuer-unavailable"));
        assertThat("the retry ran again: nothing was stored", retry.statusCode(), is(502));
        assertThat(issuer.stats().unavailable() - before.unavailable(), is(2L));
    }

    @Test
    @Order(Order.DEFAULT + 1)
    void aHungIssuerIs504AndTheRetryGetsTheIssuersLateDecisionWithoutASecondCall() throws Exception {
        IssuerStats before = issuer.stats();
        String key = key();
        HttpResponse<String> timedOut;
        long start = System.nanoTime();
        issuer.signal("STOP");
        try {
            timedOut = post(key, "4111111111111111");
        } finally {
            issuer.signal("CONT");
        }
        Duration waited = Duration.ofNanos(System.nanoTime() - start);
        assertThat(timedOut.body(), timedOut.statusCode(), is(504));
        assertThat("answered at authorizer.timeout, not when the issuer woke up", waited,
                   lessThan(TIMEOUT.plusSeconds(9)));

        // Resumed, the issuer decides the call it was holding: the outcome the service could not know.
        issuer.awaitStats(stats -> stats.authorizations() > before.authorizations(), Duration.ofSeconds(20));
        // ...and its answer reached the service, which kept it: the issuer counts the decision before its answer is
        // on the wire, and a retry sent in between would ask again (a loaded CI run saw one duplicate attempt).
        service.awaitLine(line -> line.contains("after the timeout; kept for its retry"), Duration.ofSeconds(20));
        HttpResponse<String> retry = post(key, "4111111111111111");

        assertThat(retry.body(), retry.statusCode(), is(201));
        assertThat(retry.body(), containsString("\"status\":\"APPROVED\""));
        IssuerStats after = issuer.stats();
        assertThat("one authorization at the issuer for this payment", after.authorizations() - before.authorizations(),
                   is(1L));
        // The decision that arrived after the timeout was kept: the retry did not send the attempt id again.
        assertThat(after.duplicateAttempts() - before.duplicateAttempts(), is(0L));
        assertThat(after.requests() - before.requests(), is(1L));
        assertThat(after.paymentsApprovedMoreThanOnce(), is(before.paymentsApprovedMoreThanOnce()));
    }

    @Test
    @Order(Order.DEFAULT + 2)
    void aDeadIssuerIs502() throws Exception {
        issuer.signal("KILL");
        HttpResponse<String> response = post(key(), "4111111111111111");

        assertThat(response.body(), response.statusCode(), is(502));
        assertThat(MetricsScrape.of(service.healthPort()).sum("authorizer_invocations_total",
                                                              Map.of("outcome", "unknown")), greaterThan(0.0));
    }

    @Test
    @Order(Order.DEFAULT + 3)
    void theIssuerClientIsClosedInTheCleanupPhaseAndNoCardNumberWasLogged() throws Exception {
        service.signal("TERM");
        assertThat(service.awaitExit(Duration.ofSeconds(30)), is(0));

        String log = String.join("\n", service.output());
        int cleanup = log.indexOf("Shutdown phase cleanup");
        assertThat(log, cleanup, greaterThan(0));
        assertThat(log, log.indexOf("Issuer client closed: http://127.0.0.1:" + issuer.port()), greaterThan(cleanup));
        assertThat(log, not(containsString("4111111111111111")));
        assertThat(String.join("\n", issuer.output()), not(containsString("4111111111111111")));
    }
}
