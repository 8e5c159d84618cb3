package com.example.payments.issuer;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;

/**
 * The simulated issuer's reversals: applied at most once per reversal id (the same answer again), a no-op for an
 * attempt never approved, a reversed attempt id answered {@code DECLINED reversed}; and, without attempt
 * deduplication, a payment approved twice under one attempt id counted as a double hold until a reversal releases it;
 * a reversal that comes before its call leaves a tombstone, and the late call is declined, never approved.
 */
class IssuerReversalsTest {

    private final AtomicLong now = new AtomicLong();

    private SimulatedIssuer issuer(boolean deduplicate) {
        return SimulatedIssuer.create(new IssuerSettings(1_000_000, Duration.ZERO, Duration.ZERO,
                                                         Duration.ofHours(1), 100), now::get, deduplicate);
    }

    private static IssuerRequest payment(String attemptId, String card) {
        return new IssuerRequest(attemptId, "m_123", "order-" + attemptId, 1299, "EUR", card);
    }

    @Test
    void aReversalIsAppliedOnceAndItsAttemptIsThenDeclinedReversed() throws Exception {
        SimulatedIssuer issuer = issuer(true);
        issuer.authorize(payment("att_1", "4111111111111111"));

        SimulatedIssuer.Decided first = issuer.reverse("rev_1", "att_1");
        SimulatedIssuer.Decided again = issuer.reverse("rev_1", "att_1");

        assertThat(first.decision().approved(), is(true));
        assertThat(first.replayed(), is(false));
        assertThat(again.replayed(), is(true));
        assertThat(again.decidedAt(), is(first.decidedAt()));
        assertThat(issuer.stats().reversals(), is(1L));
        SimulatedIssuer.Decided retried = (SimulatedIssuer.Decided) issuer.authorize(payment("att_1",
                                                                                            "4111111111111111"));
        assertThat(retried.decision(), is(new IssuerRules.Decision(false, "reversed")));
        assertThat("another reversal id finds nothing left to reverse",
                   issuer.reverse("rev_2", "att_1").decision().declineCode(), is("not_approved"));
        assertThat(issuer.stats().reversals(), is(1L));
    }

    @Test
    void aReversalOfAnAttemptNeverApprovedIsANoOp() throws Exception {
        SimulatedIssuer issuer = issuer(true);
        issuer.authorize(payment("att_declined", IssuerRules.DECLINED_CARD));

        assertThat(issuer.reverse("rev_1", "att_declined").decision().declineCode(), is("not_approved"));
        assertThat(issuer.reverse("rev_2", "att_never_sent").decision().declineCode(), is("not_approved"));
        assertThat(issuer.stats().reversals(), is(0L));
    }

    @Test
    void withoutDeduplicationAnAttemptSentTwiceIsTwoApprovalsUntilItIsReversed() throws Exception {
        SimulatedIssuer issuer = issuer(false);
        issuer.authorize(payment("att_1", "4111111111111111"));
        issuer.authorize(payment("att_1", "4111111111111111"));
        issuer.authorize(payment("att_2", "4111111111111111"));

        IssuerStats doubled = issuer.stats();
        assertThat(doubled.approved(), is(3L));
        assertThat(doubled.duplicateAttempts(), is(0L));
        assertThat("att_1's payment holds two approvals", doubled.paymentsApprovedTwiceNet(), is(1L));

        assertThat(issuer.reverse("rev_1", "att_1").decision().approved(), is(true));
        assertThat("both approvals of the attempt released", issuer.stats().paymentsApprovedTwiceNet(), is(0L));
    }

    @Test
    void aReversalThatComesBeforeItsCallLeavesATombstoneThatDeclinesTheLateCall() throws Exception {
        for (boolean deduplicate : new boolean[] {true, false}) {
            SimulatedIssuer issuer = issuer(deduplicate);

            assertThat(issuer.reverse("rev_1", "att_frozen").decision().declineCode(), is("not_approved"));
            SimulatedIssuer.Decided late = (SimulatedIssuer.Decided) issuer.authorize(payment("att_frozen",
                                                                                              "4111111111111111"));

            assertThat("deduplicate " + deduplicate, late.decision(), is(new IssuerRules.Decision(false, "reversed")));
            assertThat(issuer.stats().approved(), is(0L));
            assertThat("another attempt id of the payment is decided as usual",
                       ((SimulatedIssuer.Decided) issuer.authorize(payment("att_next", "4111111111111111")))
                               .decision().approved(), is(true));
        }
    }

    @Test
    void withoutDeduplicationAReversedAttemptSentAgainIsNotApprovedAgain() throws Exception {
        SimulatedIssuer issuer = issuer(false);
        issuer.authorize(payment("att_1", "4111111111111111"));
        issuer.reverse("rev_1", "att_1");

        SimulatedIssuer.Decided again = (SimulatedIssuer.Decided) issuer.authorize(payment("att_1",
                                                                                           "4111111111111111"));

        assertThat(again.decision(), is(new IssuerRules.Decision(false, "reversed")));
        assertThat(issuer.stats().paymentsApprovedTwiceNet(), is(0L));
        assertThat(issuer.stats().approved(), is(1L));
    }
}
