package com.example.payments;

import java.time.Instant;

import com.example.payments.authorization.AuthorizationAttempt;
import com.example.payments.authorization.Authorizer;
import com.example.payments.issuer.IssuerRules;

/**
 * The warm-up sandbox's authorizer: the test-card rules ({@link IssuerRules}), decided in memory on the calling
 * thread, so a warm-up never calls an issuer, never writes the simulator's ledger and counts no metric. A test card
 * the rules call unreachable throws {@link IssuerUnavailableException}, as the issuer would answer.
 *
 * @param limit the approval limit in minor units ({@code authorizer.default-limit})
 */
record WarmUpAuthorizer(long limit) implements Authorizer {

    @Override
    public Decision authorize(AuthorizationAttempt attempt) throws IssuerUnavailableException {
        return switch (IssuerRules.decide(attempt.request().card().number(), attempt.request().amount().value(),
                                          limit)) {
        case IssuerRules.Decision decision -> decision.approved()
                ? Decision.approve(Instant.now()) : Decision.decline(decision.declineCode(), Instant.now());
        case IssuerRules.Unreachable unreachable -> throw new IssuerUnavailableException("unreachable test card");
        };
    }

    @Override
    public boolean blocks() {
        return false;
    }
}
