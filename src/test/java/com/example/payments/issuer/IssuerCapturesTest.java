package com.example.payments.issuer;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.nullValue;

/** The simulated issuer refuses over-capture and captures after a void itself, and deduplicates each attempt id. */
class IssuerCapturesTest {

    private final AtomicLong nanos = new AtomicLong();
    private final SimulatedIssuer issuer = SimulatedIssuer.create(new IssuerSettings(1_000_000, Duration.ZERO,
            Duration.ZERO, Duration.ofDays(7), 1000), nanos::get);

    private void approve(String attemptId, long amount) throws InterruptedException {
        issuer.authorize(new IssuerRequest(attemptId, "m_123", null, amount, "EUR", "4111111111111111"));
    }

    @Test
    void capturesStayWithinTheAuthorizedAmountAndARetryIsAnsweredOnce() throws InterruptedException {
        approve("att_a", 1000);
        assertThat(issuer.capture("att_c1", "att_a", 600).decision().approved(), is(true));
        SimulatedIssuer.Decided retry = issuer.capture("att_c1", "att_a", 600);
        assertThat(retry.replayed(), is(true));
        SimulatedIssuer.Decided over = issuer.capture("att_c2", "att_a", 500);
        assertThat(over.decision().declineCode(), is("over_capture"));
        assertThat(issuer.capture("att_c3", "att_a", 400).decision().declineCode(), nullValue());
        assertThat(issuer.freshOperationDecisions(), is(3L));
    }

    @Test
    void anApprovalAndEachAnswerAreRememberedForTheRetentionThenForgotten() throws InterruptedException {
        long retention = Duration.ofDays(7).toNanos();
        approve("att_e", 1000);
        assertThat(issuer.capture("att_e1", "att_e", 100).decision().approved(), is(true));
        nanos.addAndGet(retention - 1);
        assertThat("capturable until the retention ends", issuer.capture("att_e2", "att_e", 100).decision()
                .approved(), is(true));
        assertThat(issuer.capture("att_e1", "att_e", 100).replayed(), is(true));
        nanos.addAndGet(1);
        assertThat("the approval is forgotten", issuer.capture("att_e3", "att_e", 100).decision().declineCode(),
                   is("unknown_authorization"));
        SimulatedIssuer.Decided again = issuer.capture("att_e1", "att_e", 100);
        assertThat("the answer is forgotten too: decided afresh", again.replayed(), is(false));
    }

    @Test
    void nothingIsCapturedAfterAVoidNorOfAnUnknownAuthorization() throws InterruptedException {
        approve("att_b", 1000);
        assertThat(issuer.voidRemainder("att_v", "att_b").decision().approved(), is(true));
        assertThat(issuer.capture("att_c", "att_b", 1).decision().declineCode(), is("voided"));
        assertThat(issuer.capture("att_d", "att_unknown", 1).decision().declineCode(), is("unknown_authorization"));
    }

    @Test
    void theLedgerShowsEachAuthorizationsCapturesAndEachOperationsOnlyDecision() throws InterruptedException {
        approve("att_l", 1000);
        issuer.capture("att_l1", "att_l", 300);
        issuer.capture("att_l1", "att_l", 300);
        issuer.capture("att_l2", "att_l", 800);
        issuer.voidRemainder("att_lv", "att_l");
        IssuerCaptures.Ledger ledger = issuer.operationLedger();
        assertThat(ledger.authorizations().get("att_l"), is(new IssuerCaptures.HeldView(1000, 300, true)));
        assertThat(ledger.operations().get("att_l1").status(), is("APPROVED"));
        assertThat(ledger.operations().get("att_l1").sequence(), is(1L));
        assertThat(ledger.operations().get("att_l2").declineCode(), is("over_capture"));
        assertThat(ledger.operations().get("att_lv").kind(), is("void"));
        assertThat(ledger.operations().get("att_lv").sequence(), is(3L));
        assertThat(ledger.freshDecisions(), is(3L));
        assertThat(ledger.evictions(), is(0L));
    }
}
