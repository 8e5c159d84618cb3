package com.example.payments.issuer;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;

import io.helidon.metrics.api.Counter;
import io.helidon.metrics.api.Metrics;
import io.helidon.metrics.api.MetricsConfig;
import io.helidon.metrics.api.MeterRegistry;
import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.instanceOf;
import static org.hamcrest.Matchers.is;

/**
 * The deduplicating issuer: one decision per attempt id, duplicates answered from the ledger and counted, business
 * payments approved twice exposed, and the ledger bounded by its retention and its size.
 */
class SimulatedIssuerTest {

    private static final Duration RETENTION = Duration.ofHours(24);
    private final AtomicLong now = new AtomicLong();

    private SimulatedIssuer issuer(Duration retention, int maxEntries) {
        return SimulatedIssuer.create(new IssuerSettings(1_000_000, Duration.ZERO, Duration.ZERO, retention,
                                                         maxEntries), now::get);
    }

    /** The answer without its decision time. */
    private static String decided(IssuerRules.Decision decision, boolean replayed) {
        return decision + (replayed ? " replayed" : "");
    }

    private static String decided(SimulatedIssuer.Answer answer) {
        return answer instanceof SimulatedIssuer.Decided decided
                ? decided(decided.decision(), decided.replayed()) : answer.toString();
    }

    private static IssuerRequest payment(String attemptId, String card) {
        return new IssuerRequest(attemptId, "m_123", "order-42", 1299, "EUR", card);
    }

    @Test
    void theSameAttemptIdTwiceIsOneAuthorizationAndOneDuplicate() throws Exception {
        SimulatedIssuer issuer = issuer(RETENTION, 100);
        SimulatedIssuer.Answer first = issuer.authorize(payment("att_1", "4111111111111111"));
        SimulatedIssuer.Answer second = issuer.authorize(payment("att_1", "4111111111111111"));

        assertThat(decided(first), is(decided(new IssuerRules.Decision(true, null), false)));
        assertThat(decided(second), is(decided(new IssuerRules.Decision(true, null), true)));
        IssuerStats stats = issuer.stats();
        assertThat(stats.requests(), is(2L));
        assertThat(stats.authorizations(), is(1L));
        assertThat(stats.duplicateAttempts(), is(1L));
        assertThat(stats.paymentsApprovedMoreThanOnce(), is(0L));
    }

    @Test
    void aRepeatedAttemptIdCarriesTheTimeOfItsFirstDecision() throws Exception {
        SimulatedIssuer issuer = issuer(RETENTION, 100);
        now.set(Duration.ofMillis(1_234).toNanos());
        SimulatedIssuer.Decided first = (SimulatedIssuer.Decided) issuer.authorize(payment("att_1", "4111111111111111"));
        now.addAndGet(Duration.ofSeconds(5).toNanos());
        SimulatedIssuer.Decided retry = (SimulatedIssuer.Decided) issuer.authorize(payment("att_1", "4111111111111111"));

        assertThat(first.decidedAt(), is(Instant.EPOCH.plusMillis(1_234)));
        assertThat("the retry's decision time is the first one's", retry.decidedAt(), is(first.decidedAt()));
    }

    @Test
    void aKnownAttemptIdKeepsItsFirstDecisionAndADifferentPaymentUnderItIsCountedAsAConflict() throws Exception {
        SimulatedIssuer issuer = issuer(RETENTION, 100);
        issuer.authorize(payment("att_1", "4000000000000002"));
        SimulatedIssuer.Answer reused = issuer.authorize(payment("att_1", "4111111111111111"));

        assertThat(decided(reused), is(decided(new IssuerRules.Decision(false, "card_declined"), true)));
        assertThat(issuer.stats().attemptIdConflicts(), is(1L));
        assertThat(issuer.stats().authorizations(), is(1L));
    }

    @Test
    void theSameBusinessPaymentApprovedUnderTwoAttemptIdsShowsAsApprovedMoreThanOnce() throws Exception {
        SimulatedIssuer issuer = issuer(RETENTION, 100);
        issuer.authorize(payment("att_1", "4111111111111111"));
        issuer.authorize(payment("att_2", "4111111111111111"));
        issuer.authorize(payment("att_3", "4111111111111111"));

        IssuerStats stats = issuer.stats();
        assertThat(stats.authorizations(), is(3L));
        assertThat(stats.duplicateAttempts(), is(0L));
        assertThat("one payment, counted once however often it was approved", stats.paymentsApprovedMoreThanOnce(),
                   is(1L));
    }

    @Test
    void paymentsThatDifferInAnyFieldAreDifferentPayments() throws Exception {
        SimulatedIssuer issuer = issuer(RETENTION, 100);
        issuer.authorize(new IssuerRequest("att_1", "m_123", "order-42", 1299, "EUR", "4111111111111111"));
        issuer.authorize(new IssuerRequest("att_2", "m_124", "order-42", 1299, "EUR", "4111111111111111"));
        issuer.authorize(new IssuerRequest("att_3", "m_123", "order-43", 1299, "EUR", "4111111111111111"));
        issuer.authorize(new IssuerRequest("att_4", "m_123", null, 1299, "EUR", "4111111111111111"));
        issuer.authorize(new IssuerRequest("att_5", "m_123", "order-42", 1300, "EUR", "4111111111111111"));
        issuer.authorize(new IssuerRequest("att_6", "m_123", "order-42", 1299, "USD", "4111111111111111"));
        issuer.authorize(new IssuerRequest("att_7", "m_123", "order-42", 1299, "EUR", "5555555555554444"));

        assertThat(issuer.stats().approved(), is(7L));
        assertThat(issuer.stats().paymentsApprovedMoreThanOnce(), is(0L));
    }

    @Test
    void declinesAreNotApprovals() throws Exception {
        SimulatedIssuer issuer = issuer(RETENTION, 100);
        issuer.authorize(payment("att_1", "4000000000009995"));
        issuer.authorize(payment("att_2", "4000000000009995"));

        assertThat(issuer.stats().declined(), is(2L));
        assertThat(issuer.stats().paymentsApprovedMoreThanOnce(), is(0L));
    }

    @Test
    void anUnreachableIssuerRecordsNothingSoTheRetryIsNotADuplicate() throws Exception {
        SimulatedIssuer issuer = issuer(RETENTION, 100);
        assertThat(issuer.authorize(payment("att_1", "4000000000000119")), instanceOf(SimulatedIssuer.Unavailable.class));
        assertThat(issuer.authorize(payment("att_1", "4000000000000119")), instanceOf(SimulatedIssuer.Unavailable.class));

        IssuerStats stats = issuer.stats();
        assertThat(stats.unavailable(), is(2L));
        assertThat(stats.duplicateAttempts(), is(0L));
        assertThat(stats.ledgerEntries(), is(0L));
    }

    @Test
    void anAttemptIdIsForgottenAfterTheRetention() throws Exception {
        SimulatedIssuer issuer = issuer(Duration.ofMinutes(10), 100);
        issuer.authorize(payment("att_1", "4111111111111111"));
        now.addAndGet(Duration.ofMinutes(10).minusNanos(1).toNanos());
        assertThat(decided(issuer.authorize(payment("att_1", "4111111111111111"))),
                   is(decided(new IssuerRules.Decision(true, null), true)));

        now.addAndGet(1);
        assertThat(issuer.stats().ledgerEntries(), is(0L));
        assertThat(decided(issuer.authorize(payment("att_1", "4111111111111111"))),
                   is(decided(new IssuerRules.Decision(true, null), false)));
        assertThat(issuer.stats().authorizations(), is(2L));
        assertThat("the first approval expired with its attempt", issuer.stats().paymentsApprovedMoreThanOnce(),
                   is(0L));
    }

    @Test
    void aFullLedgerForgetsItsOldestAttemptFirstAndCountsTheEviction() throws Exception {
        SimulatedIssuer issuer = issuer(RETENTION, 2);
        issuer.authorize(payment("att_1", "4111111111111111"));
        issuer.authorize(payment("att_2", "4000000000000002"));
        issuer.authorize(payment("att_3", "4000000000009995"));

        assertThat(issuer.stats().ledgerEntries(), is(2L));
        assertThat(issuer.stats().evictions(), is(1L));
        assertThat(decided(issuer.authorize(payment("att_3", "4000000000009995"))),
                   is(decided(new IssuerRules.Decision(false, "insufficient_funds"), true)));
        assertThat(decided(issuer.authorize(payment("att_1", "4111111111111111"))),
                   is(decided(new IssuerRules.Decision(true, null), false)));
    }

    @Test
    void concurrentCallsWithOneAttemptIdDecideOnce() throws Exception {
        SimulatedIssuer issuer = issuer(RETENTION, 100);
        CountDownLatch start = new CountDownLatch(1);
        List<Future<SimulatedIssuer.Answer>> answers = new ArrayList<>();
        try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int i = 0; i < 200; i++) {
                answers.add(threads.submit(() -> {
                    start.await();
                    return issuer.authorize(payment("att_1", "4111111111111111"));
                }));
            }
            start.countDown();
        }
        long fresh = 0;
        for (Future<SimulatedIssuer.Answer> answer : answers) {
            SimulatedIssuer.Decided decided = (SimulatedIssuer.Decided) answer.get();
            assertThat(decided.decision().approved(), is(true));
            fresh += decided.replayed() ? 0 : 1;
        }
        assertThat(fresh, is(1L));
        assertThat(issuer.stats().authorizations(), is(1L));
        assertThat(issuer.stats().duplicateAttempts(), is(199L));
    }

    @Test
    void aCallInterruptedDuringItsLatencyRecordsNothing() throws Exception {
        SimulatedIssuer issuer = SimulatedIssuer.create(new IssuerSettings(1_000_000, Duration.ofMinutes(1),
                Duration.ZERO, RETENTION, 100), System::nanoTime);
        Thread call = Thread.ofVirtual().start(() -> {
            try {
                issuer.authorize(payment("att_1", "4111111111111111"));
            } catch (InterruptedException expected) {
                // the call ends
            }
        });
        while (issuer.stats().inFlight() == 0) {
            Thread.sleep(5);
        }
        call.interrupt();
        call.join(Duration.ofSeconds(10));

        assertThat(call.isAlive(), is(false));
        assertThat(issuer.stats().requests(), is(0L));
        assertThat(issuer.stats().inFlight(), is(0L));
    }

    @Test
    void theMetricsCountDecisionsOncePerAttemptIdAndDuplicatesApart() throws Exception {
        MeterRegistry meters = Metrics.createMeterRegistry(MetricsConfig.create());
        SimulatedIssuer issuer = SimulatedIssuer.create(new IssuerSettings(1_000_000, Duration.ZERO, Duration.ZERO,
                                                                           RETENTION, 100), meters);
        // Helidon's registries share one underlying registry: compare with the counts before.
        long approved = count(meters, "issuer_authorizations", Map.of("decision", "approved"));
        long declined = count(meters, "issuer_authorizations", Map.of("decision", "declined"));
        long duplicates = count(meters, "issuer_duplicate_attempts", Map.of());
        long twice = count(meters, "issuer_payments_approved_more_than_once", Map.of());
        issuer.authorize(payment("att_1", "4111111111111111"));
        issuer.authorize(payment("att_1", "4111111111111111"));
        issuer.authorize(payment("att_2", "4000000000000002"));
        issuer.authorize(payment("att_3", "4111111111111111"));

        assertThat(count(meters, "issuer_authorizations", Map.of("decision", "approved")) - approved, is(2L));
        assertThat(count(meters, "issuer_authorizations", Map.of("decision", "declined")) - declined, is(1L));
        assertThat(count(meters, "issuer_duplicate_attempts", Map.of()) - duplicates, is(1L));
        assertThat(count(meters, "issuer_payments_approved_more_than_once", Map.of()) - twice, is(1L));
    }

    static long count(MeterRegistry meters, String name, Map<String, String> tags) {
        return meters.meters(meter -> meter.id().name().equals(name)
                                      && meter.id().tagsMap().entrySet().containsAll(tags.entrySet()))
                .stream().mapToLong(meter -> ((Counter) meter).count()).sum();
    }
}
