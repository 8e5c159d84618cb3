package com.example.payments.authorization;

import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.not;

/**
 * The canonical form of an authorization request, the text its idempotency fingerprint is computed over.
 */
class AuthorizationRequestTest {

    private static final Amount AMOUNT = new Amount(1299, "EUR");
    private static final Card CARD = new Card("4111111111111111", 12, 2030, "123");

    @Test
    void aReferenceSentAndOneNotSentAreWrittenAsEarlierVersionsWroteThem() {
        // Byte for byte the form of the versions before absent and empty were told apart: a record they stored in
        // Redis or PostgreSQL still matches a retry of the same request (replay, not 422) across a rolling deploy.
        assertThat(new AuthorizationRequest("m_123", "order-42", AMOUNT, CARD).canonicalForm(),
                   is("merchantId=m_123\nreference=order-42\namount.value=1299\namount.currency=EUR\n"
                      + "card.number=4111111111111111\ncard.expiryMonth=12\ncard.expiryYear=2030\n"));
        assertThat(new AuthorizationRequest("m_123", null, AMOUNT, CARD).canonicalForm(),
                   is("merchantId=m_123\nreference=\namount.value=1299\namount.currency=EUR\n"
                      + "card.number=4111111111111111\ncard.expiryMonth=12\ncard.expiryYear=2030\n"));
    }

    @Test
    void anAbsentANullAndAnEmptyReferenceHaveThreeForms() {
        String absent = new AuthorizationRequest("m_123", null, false, AMOUNT, CARD).canonicalForm();
        String sentAsNull = new AuthorizationRequest("m_123", null, true, AMOUNT, CARD).canonicalForm();
        String empty = new AuthorizationRequest("m_123", "", true, AMOUNT, CARD).canonicalForm();
        assertThat(empty, not(is(absent)));
        assertThat(sentAsNull, not(is(absent)));
        assertThat(sentAsNull, not(is(empty)));
    }

    @Test
    void theCvcIsNotPartOfTheForm() {
        assertThat(new AuthorizationRequest("m_123", "r", AMOUNT, new Card("4111111111111111", 12, 2030, "987"))
                           .canonicalForm(),
                   is(new AuthorizationRequest("m_123", "r", AMOUNT, CARD).canonicalForm()));
    }
}
