package com.example.payments.authorization;

import com.example.payments.issuer.IssuerRequest;
import com.example.payments.issuer.IssuerRules;
import com.example.payments.issuer.SimulatedIssuer;

import io.helidon.metrics.api.MeterRegistry;

/**
 * The default {@link Authorizer} ({@code authorizer.type: rule-based}): an issuer simulated in this process, which
 * decides by the test-card rules of {@link IssuerRules} and deduplicates on the attempt id like the issuer simulator
 * behind the {@code http} authorizer ({@link SimulatedIssuer}): the same attempt id always gets the same decision and
 * is counted once in {@code issuer_authorizations_total}, on this service's {@code /metrics}.
 *
 * <p>{@code authorizer.simulated-latency} and {@code authorizer.simulated-latency-jitter} hold each call in flight;
 * {@code authorizer.default-limit} is the largest approvable amount (minor units); {@code authorizer.ledger-retention}
 * and {@code authorizer.ledger-max-entries} bound the ledger's memory.
 */
public final class RuleBasedAuthorizer implements Authorizer {

    private final SimulatedIssuer issuer;
    private final boolean blocks;

    private RuleBasedAuthorizer(SimulatedIssuer issuer, boolean blocks) {
        this.issuer = issuer;
        this.blocks = blocks;
    }

    /**
     * Creates the authorizer and registers the issuer's metrics.
     *
     * @param settings limit, simulated latency and ledger bounds ({@link AuthorizerSettings#ruleBased()})
     * @param meters   the service's registry
     * @return the authorizer
     */
    public static RuleBasedAuthorizer create(AuthorizerSettings settings, MeterRegistry meters) {
        return new RuleBasedAuthorizer(SimulatedIssuer.create(settings.ruleBased(), meters),
                                       !settings.ruleBased().latency().isZero()
                                       || !settings.ruleBased().jitter().isZero());
    }

    /**
     * Blocks only with a simulated latency: without one, a decision is a lookup in memory.
     *
     * @return {@code true} when {@code authorizer.simulated-latency} or its jitter is set
     */
    @Override
    public boolean blocks() {
        return blocks;
    }

    @Override
    public Decision capture(AcquirerOperation operation) throws InterruptedException {
        return decision(issuer.capture(operation.attemptId(), operation.authorizationAttemptId(), operation.amount()));
    }

    @Override
    public Decision voidRemainder(AcquirerOperation operation) throws InterruptedException {
        return decision(issuer.voidRemainder(operation.attemptId(), operation.authorizationAttemptId()));
    }

    @Override
    public Decision reverse(Reversal reversal) throws InterruptedException {
        return decision(issuer.reverse(reversal.reversalId(), reversal.attemptId()));
    }

    private static Decision decision(SimulatedIssuer.Decided decided) {
        return decided.decision().approved() ? Decision.approve(decided.decidedAt())
                : Decision.decline(decided.decision().declineCode(), decided.decidedAt());
    }

    @Override
    public Decision authorize(AuthorizationAttempt attempt) throws IssuerUnavailableException, InterruptedException {
        AuthorizationRequest request = attempt.request();
        IssuerRequest call = new IssuerRequest(attempt.attemptId(), request.merchantId(), request.reference(),
                                               request.amount().value(), request.amount().currency(),
                                               request.card().number());
        return switch (issuer.authorize(call)) {
        case SimulatedIssuer.Decided decided -> decided.decision().approved()
                ? Decision.approve(decided.decidedAt())
                : Decision.decline(decided.decision().declineCode(), decided.decidedAt());
        case SimulatedIssuer.Unavailable unavailable ->
                throw new IssuerUnavailableException("simulated issuer outage (test card)");
        };
    }
}
