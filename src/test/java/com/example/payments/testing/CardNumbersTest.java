package com.example.payments.testing;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The tests' card-number oracle finds what it must, or every "no card number in the logs" assertion proves nothing. */
class CardNumbersTest {

    @Test
    void findsTestCardsPlainSeparatedAndInsideLongerRuns() {
        assertTrue(CardNumbers.in("card 4111111111111111 declined"));
        assertTrue(CardNumbers.in("pan=4111-1111-1111-1111"));
        assertTrue(CardNumbers.in("5555 5555 5555 4444"));
        assertTrue(CardNumbers.in("id 0004111111111111111000"));
        assertTrue(CardNumbers.in("amex 378282246310005"));
    }

    @Test
    void passesOverRunsShorterThanThirteenDigitsAndMaskedNumbers() {
        // (Any 13-19 digit window counts, so a longer Luhn-invalid run may still hold one: the oracle errs strict.)
        assertFalse(CardNumbers.in("2026-12-02T03:30:06.123Z took 4288688453 ns"));
        assertFalse(CardNumbers.in("411111111112"));
        assertFalse(CardNumbers.in("****-****-****-1111"));
    }
}
