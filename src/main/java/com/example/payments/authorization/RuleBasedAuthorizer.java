package com.example.payments.authorization;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The default {@link Authorizer}: a rule table standing in for a real issuer, with optional simulated latency.
 *
 * <table>
 *     <caption>Test cards</caption>
 *     <tr><th>card number</th><th>result</th></tr>
 *     <tr><td>4111111111111111, 5555555555554444</td><td>approved</td></tr>
 *     <tr><td>4000000000000002</td><td>declined {@code card_declined}</td></tr>
 *     <tr><td>4000000000009995</td><td>declined {@code insufficient_funds}</td></tr>
 *     <tr><td>4000000000000119</td><td>issuer unreachable (502)</td></tr>
 *     <tr><td>any other valid card</td><td>approved</td></tr>
 * </table>
 * An amount above {@code authorizer.default-limit} (minor units) declines with {@code limit_exceeded}.
 */
public final class RuleBasedAuthorizer implements Authorizer {

    private final long defaultLimit;
    private final Duration latency;
    private final Duration jitter;

    private RuleBasedAuthorizer(AuthorizerSettings settings) {
        this.defaultLimit = settings.defaultLimit();
        this.latency = settings.simulatedLatency();
        this.jitter = settings.simulatedJitter();
    }

    /**
     * Creates the authorizer.
     *
     * @param settings limit and simulated latency
     * @return the authorizer
     */
    public static RuleBasedAuthorizer create(AuthorizerSettings settings) {
        return new RuleBasedAuthorizer(settings);
    }

    @Override
    public Decision authorize(AuthorizationAttempt attempt) throws IssuerUnavailableException, InterruptedException {
        simulateLatency();
        AuthorizationRequest request = attempt.request();
        return switch (request.card().number()) {
        case "4000000000000002" -> Decision.decline("card_declined");
        case "4000000000009995" -> Decision.decline("insufficient_funds");
        case "4000000000000119" -> throw new IssuerUnavailableException("simulated issuer outage (test card)");
        default -> request.amount().value() > defaultLimit ? Decision.decline("limit_exceeded") : Decision.approve();
        };
    }

    private void simulateLatency() throws InterruptedException {
        long millis = latency.toMillis();
        if (!jitter.isZero()) {
            millis += ThreadLocalRandom.current().nextLong(jitter.toMillis() + 1);
        }
        if (millis > 0) {
            Thread.sleep(millis);
        }
    }
}
