package com.example.payments.authorization;

import com.example.payments.idempotency.IdempotencyKey;

import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.not;

/**
 * The attempt id handed to the issuer is stable per merchant and key, so an issuer can deduplicate retries.
 */
class AttemptIdTest {

    @Test
    void theSameMerchantAndKeyAlwaysGiveTheSameAttemptId() {
        String id = AuthorizationProcessor.attemptId("m_123", new IdempotencyKey("order-42"));
        assertThat(AuthorizationProcessor.attemptId("m_123", new IdempotencyKey("order-42")), is(id));
        assertThat(id.matches("att_[0-9a-f]{32}"), is(true));
    }

    @Test
    void anotherMerchantOrKeyGivesAnotherAttemptId() {
        String id = AuthorizationProcessor.attemptId("m_123", new IdempotencyKey("order-42"));
        assertThat(AuthorizationProcessor.attemptId("m_124", new IdempotencyKey("order-42")), not(id));
        assertThat(AuthorizationProcessor.attemptId("m_123", new IdempotencyKey("order-43")), not(id));
    }
}
