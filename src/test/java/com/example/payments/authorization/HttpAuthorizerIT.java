package com.example.payments.authorization;

import java.net.URI;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;

import com.example.payments.issuer.IssuerStats;
import com.example.payments.testing.IssuerSimulatorProcess;

import io.helidon.metrics.api.MeterRegistry;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.instanceOf;
import static org.hamcrest.Matchers.is;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * {@link HttpAuthorizer} called directly against a real issuer simulator process: decisions, the attempt id as the
 * issuer's idempotency key, an unknown outcome for an error status or a dead issuer, and interruption. The tests that
 * hang the simulator ({@code SIGSTOP}) run last: the call they leave behind may still be decided after {@code SIGCONT}.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class HttpAuthorizerIT {

    private static IssuerSimulatorProcess issuer;
    private static HttpAuthorizer authorizer;

    @BeforeAll
    static void startSimulator() throws Exception {
        issuer = IssuerSimulatorProcess.start(Map.of());
        authorizer = HttpAuthorizer.create(URI.create(issuer.uri()), Duration.ofSeconds(30), MeterRegistry.create());
    }

    @AfterAll
    static void stop() {
        if (authorizer != null) {
            authorizer.close();
        }
        if (issuer != null) {
            issuer.close();
        }
    }

    private static AuthorizationAttempt attempt(String attemptId, String card) {
        return new AuthorizationAttempt(attemptId, new AuthorizationRequest("m_123", "order-" + attemptId,
                new Amount(1299, "EUR"), new Card(card, 12, 2030, "123")));
    }

    private static String attemptId() {
        return "att_" + UUID.randomUUID().toString().replace("-", "");
    }

    /** A decision without its time. */
    private static String outcome(Authorizer.Decision decision) {
        return decision.approved() ? "approved" : "declined " + decision.declineCode();
    }

    @Test
    void theIssuersDecisionsComeBack() throws Exception {
        assertThat(outcome(authorizer.authorize(attempt(attemptId(), "4111111111111111"))), is("approved"));
        assertThat(outcome(authorizer.authorize(attempt(attemptId(), "4000000000000002"))),
                   is("declined card_declined"));
        assertThat(outcome(authorizer.authorize(attempt(attemptId(), "4000000000009995"))),
                   is("declined insufficient_funds"));
    }

    @Test
    void theAttemptIdIsTheIssuersIdempotencyKey() throws Exception {
        IssuerStats before = issuer.stats();
        AuthorizationAttempt attempt = attempt(attemptId(), "4111111111111111");
        authorizer.authorize(attempt);
        authorizer.authorize(attempt);

        IssuerStats after = issuer.stats();
        assertThat(after.authorizations() - before.authorizations(), is(1L));
        assertThat(after.duplicateAttempts() - before.duplicateAttempts(), is(1L));
    }

    @Test
    void anIssuerThatClosesIdleConnectionsNeverCostsA502() throws Exception {
        // Calls spaced around the simulator's idle timeout: some find their pooled connection closed by it, some
        // cross its close (written in full, then reset): against a deduplicating acquirer, both go out once more on a
        // new connection under the same attempt id.
        long[] pausesMillis = {900, 1100, 1300, 1000, 1500, 950, 1200, 1050, 2100, 1000, 1150, 1250};
        try (IssuerSimulatorProcess closing = IssuerSimulatorProcess.start(Map.of("issuer.idle-connection-timeout",
                                                                                  "PT1S"));
             HttpAuthorizer client = HttpAuthorizer.create(URI.create(closing.uri()), Duration.ofSeconds(5),
                                                           MeterRegistry.create(), true)) {
            for (long pause : pausesMillis) {
                assertThat(outcome(client.authorize(attempt(attemptId(), "4111111111111111"))), is("approved"));
                Thread.sleep(pause);
            }
            assertThat(outcome(client.authorize(attempt(attemptId(), "4111111111111111"))), is("approved"));
            assertThat(closing.stats().authorizations(), is((long) pausesMillis.length + 1));
        }
    }

    @Test
    void anErrorStatusIsAnUnknownOutcome() {
        Authorizer.IssuerUnavailableException e = assertThrows(Authorizer.IssuerUnavailableException.class,
                () -> authorizer.authorize(attempt(attemptId(), "4000000000000119")));
        assertThat(e.getMessage(), is("issuer answered HTTP 503"));
    }

    @Test
    void aDeadIssuerIsAnUnknownOutcome() throws Exception {
        try (IssuerSimulatorProcess dead = IssuerSimulatorProcess.start(Map.of());
             HttpAuthorizer client = HttpAuthorizer.create(URI.create(dead.uri()), Duration.ofSeconds(5),
                                                           MeterRegistry.create())) {
            assertThat(outcome(client.authorize(attempt(attemptId(), "4111111111111111"))), is("approved"));
            dead.signal("KILL");

            assertThrows(Authorizer.IssuerUnavailableException.class,
                         () -> client.authorize(attempt(attemptId(), "4111111111111111")));
        }
    }

    @Test
    @Order(Order.DEFAULT + 1)
    void anInterruptEndsACallToAHungIssuer() throws Exception {
        AtomicReference<Throwable> ended = new AtomicReference<>();
        issuer.signal("STOP");
        try {
            Thread call = Thread.ofVirtual().start(() -> {
                try {
                    authorizer.authorize(attempt(attemptId(), "4111111111111111"));
                } catch (Throwable e) {
                    ended.set(e);
                }
            });
            // Give the call time to block on the hung issuer; interrupted earlier, it ends the same way.
            Thread.sleep(300);
            call.interrupt();
            call.join(Duration.ofSeconds(10));

            assertThat("the call is still running", call.isAlive(), is(false));
            assertThat(ended.get(), instanceOf(InterruptedException.class));
        } finally {
            issuer.signal("CONT");
        }
    }

    @Test
    @Order(Order.DEFAULT + 2)
    void withoutTheCallersBoundTheClientsOwnTimeoutsEndACallToAHungIssuer() throws Exception {
        try (HttpAuthorizer shortTimeout = HttpAuthorizer.create(URI.create(issuer.uri()), Duration.ofMillis(500),
                                                                 MeterRegistry.create())) {
            issuer.signal("STOP");
            try {
                assertThrows(Authorizer.IssuerUnavailableException.class,
                             () -> shortTimeout.authorize(attempt(attemptId(), "4111111111111111")));
            } finally {
                issuer.signal("CONT");
            }
        }
    }
}
