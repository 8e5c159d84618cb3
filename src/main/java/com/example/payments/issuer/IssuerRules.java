package com.example.payments.issuer;

/**
 * The test-card rules of the simulated issuer, in one place: the built-in {@code rule-based} authorizer and the issuer
 * simulator both decide with them.
 *
 * <table>
 *     <caption>Test cards</caption>
 *     <tr><th>card number</th><th>outcome</th></tr>
 *     <tr><td>4111111111111111, 5555555555554444</td><td>approved</td></tr>
 *     <tr><td>4000000000000002</td><td>declined {@code card_declined}</td></tr>
 *     <tr><td>4000000000009995</td><td>declined {@code insufficient_funds}</td></tr>
 *     <tr><td>4000000000000119</td><td>issuer unreachable (the service answers 502)</td></tr>
 *     <tr><td>any other valid card</td><td>approved</td></tr>
 * </table>
 * An approvable amount above the limit (minor units, {@code authorizer.default-limit} or {@code issuer.default-limit},
 * default 1000000) declines with {@code limit_exceeded}.
 */
public final class IssuerRules {

    /** Declines with {@code card_declined}. */
    public static final String DECLINED_CARD = "4000000000000002";
    /** Declines with {@code insufficient_funds}. */
    public static final String INSUFFICIENT_FUNDS_CARD = "4000000000009995";
    /** Fails like an issuer that cannot be reached: no decision, outcome unknown. */
    public static final String UNREACHABLE_CARD = "4000000000000119";

    private IssuerRules() {
    }

    /** What the rules say about one payment. */
    public sealed interface Outcome {
    }

    /**
     * A decision.
     *
     * @param approved    {@code true} to approve
     * @param declineCode {@code card_declined}, {@code insufficient_funds} or {@code limit_exceeded} when declined,
     *                    {@code null} when approved
     */
    public record Decision(boolean approved, String declineCode) implements Outcome {
    }

    /** No decision: the issuer could not be reached. */
    public record Unreachable() implements Outcome {
    }

    /**
     * Applies the rules.
     *
     * @param cardNumber the PAN
     * @param amount     amount in minor units
     * @param limit      largest approvable amount in minor units
     * @return the outcome
     */
    public static Outcome decide(String cardNumber, long amount, long limit) {
        return switch (cardNumber) {
        case DECLINED_CARD -> new Decision(false, "card_declined");
        case INSUFFICIENT_FUNDS_CARD -> new Decision(false, "insufficient_funds");
        case UNREACHABLE_CARD -> new Unreachable();
        default -> amount > limit ? new Decision(false, "limit_exceeded") : new Decision(true, null);
        };
    }
}
