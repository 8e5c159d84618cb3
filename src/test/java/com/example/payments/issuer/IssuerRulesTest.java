package com.example.payments.issuer;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.instanceOf;
import static org.hamcrest.Matchers.is;

/**
 * The test-card rules as a truth table, with the limit at 1000 minor units.
 */
class IssuerRulesTest {

    @ParameterizedTest(name = "{0}, amount {1} -> {2}")
    @CsvSource(nullValues = "none", value = {
            "4111111111111111, 1000, approved, none",
            "5555555555554444, 1, approved, none",
            "4242424242424242, 999, approved, none",
            "4111111111111111, 1001, declined, limit_exceeded",
            "4000000000000002, 10, declined, card_declined",
            "4000000000000002, 5000, declined, card_declined",
            "4000000000009995, 10, declined, insufficient_funds",
            "4000000000000119, 10, unreachable, none",
            "4000000000000119, 5000, unreachable, none"})
    void theRulesDecideByCardThenByLimit(String card, long amount, String outcome, String declineCode) {
        IssuerRules.Outcome decided = IssuerRules.decide(card, amount, 1000);
        switch (outcome) {
        case "unreachable" -> assertThat(decided, instanceOf(IssuerRules.Unreachable.class));
        case "approved" -> assertThat(decided, is(new IssuerRules.Decision(true, null)));
        default -> assertThat(decided, is(new IssuerRules.Decision(false, declineCode)));
        }
    }
}
