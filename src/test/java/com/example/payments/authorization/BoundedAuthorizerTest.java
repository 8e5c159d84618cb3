package com.example.payments.authorization;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.helidon.metrics.api.Counter;
import io.helidon.metrics.api.MeterRegistry;
import io.helidon.metrics.api.Tag;
import io.helidon.metrics.api.Timer;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.greaterThanOrEqualTo;
import static org.hamcrest.Matchers.is;

/**
 * Every authorizer call is counted in {@code authorizer_invocations_total{operation,outcome}} and timed in
 * {@code authorizer_duration_seconds{outcome}}, whatever its outcome (the dashboard's authorizer panels).
 */
class BoundedAuthorizerTest {

    private static final AuthorizationAttempt ATTEMPT = new AuthorizationAttempt("attempt-1", new AuthorizationRequest(
            "m_123", "order-42", new Amount(1299, "EUR"), new Card("4111111111111111", 12, 2030, "123")));
    private static final Duration TIMEOUT = Duration.ofMillis(200);

    @ParameterizedTest
    @CsvSource({"approve, approved, Decided", "decline, declined, Decided", "fail, unknown, Failed",
                "hang, unknown, TimedOut"})
    void everyCallIsCountedAndTimedUnderItsOutcome(String behaviour, String outcome, String result) throws Exception {
        MeterRegistry meters = MeterRegistry.create();
        Authorizer authorizer = attempt -> switch (behaviour) {
            case "approve" -> Authorizer.Decision.approve(java.time.Instant.EPOCH);
            case "decline" -> Authorizer.Decision.decline("card_declined", java.time.Instant.EPOCH);
            case "fail" -> throw new Authorizer.IssuerUnavailableException("connection refused");
            default -> {
                Thread.sleep(TIMEOUT.multipliedBy(20).toMillis());
                yield Authorizer.Decision.approve(java.time.Instant.EPOCH);
            }
        };
        List<Tag> tags = List.of(Tag.create("operation", "authorize"), Tag.create("outcome", outcome));
        try (BoundedAuthorizer bounded = new BoundedAuthorizer(authorizer, TIMEOUT, meters)) {
            // The registry is the process's: other tests count too, so compare before and after.
            Counter invocations = meters.counter("authorizer_invocations", tags).orElseThrow();
            Timer duration = meters.timer("authorizer_duration", tags).orElseThrow();
            long invocationsBefore = invocations.count();
            long durationsBefore = duration.count();
            double secondsBefore = duration.totalTime(TimeUnit.SECONDS);

            BoundedAuthorizer.Outcome answer = bounded.authorize(ATTEMPT);

            assertThat(answer.getClass().getSimpleName(), is(result));
            assertThat(invocations.count() - invocationsBefore, is(1L));
            assertThat(duration.count() - durationsBefore, is(1L));
            if ("hang".equals(behaviour)) {
                assertThat(duration.totalTime(TimeUnit.SECONDS) - secondsBefore,
                           greaterThanOrEqualTo(TIMEOUT.toMillis() / 1000.0));
            }
        }
    }

    @org.junit.jupiter.api.Test
    void aCallThatCannotBlockRunsOnTheRequestThreadAndOneThatMayRunsOnAnother() throws Exception {
        Thread[] ran = new Thread[2];
        Authorizer inMemory = new Authorizer() {
            @Override
            public Decision authorize(AuthorizationAttempt attempt) {
                ran[0] = Thread.currentThread();
                return Decision.approve(java.time.Instant.EPOCH);
            }

            @Override
            public boolean blocks() {
                return false;
            }
        };
        Authorizer remote = attempt -> {
            ran[1] = Thread.currentThread();
            return Authorizer.Decision.approve(java.time.Instant.EPOCH);
        };
        MeterRegistry meters = MeterRegistry.create();
        try (BoundedAuthorizer here = new BoundedAuthorizer(inMemory, TIMEOUT, meters);
             BoundedAuthorizer elsewhere = new BoundedAuthorizer(remote, TIMEOUT, meters)) {
            assertThat(here.authorize(ATTEMPT).getClass().getSimpleName(), is("Decided"));
            assertThat(elsewhere.authorize(ATTEMPT).getClass().getSimpleName(), is("Decided"));
        }
        assertThat(ran[0] == Thread.currentThread(), is(true));
        assertThat(ran[1] == Thread.currentThread(), is(false));
    }

    @org.junit.jupiter.api.Test
    void aDecisionThatArrivesAfterTheTimeoutIsKeptAndAnswersTheRetryWithoutASecondCall() throws Exception {
        java.util.concurrent.atomic.AtomicInteger calls = new java.util.concurrent.atomic.AtomicInteger();
        Authorizer slowOnce = attempt -> {
            if (calls.incrementAndGet() == 1) {
                Thread.sleep(TIMEOUT.multipliedBy(2).toMillis());
            }
            return Authorizer.Decision.approve(java.time.Instant.EPOCH);
        };
        MeterRegistry meters = MeterRegistry.create();
        LateDecisions late = new LateDecisions(TIMEOUT.multipliedBy(3), Duration.ofSeconds(5));
        try (BoundedAuthorizer bounded = new BoundedAuthorizer(slowOnce, TIMEOUT, meters, late)) {
            assertThat(bounded.authorize(ATTEMPT).getClass().getSimpleName(), is("TimedOut"));
            Thread.sleep(TIMEOUT.multipliedBy(3).toMillis());

            BoundedAuthorizer.Outcome retry = bounded.authorize(ATTEMPT);

            assertThat(retry.getClass().getSimpleName(), is("Decided"));
            assertThat("the timed-out call went on and was not sent again", calls.get(), is(1));
            assertThat("taken once: a later execution asks the issuer", late.take(ATTEMPT.attemptId()).isPresent(),
                       is(false));
        }
    }
}
