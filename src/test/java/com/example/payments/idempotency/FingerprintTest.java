package com.example.payments.idempotency;

import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.not;

/**
 * Request fingerprints are keyed hashes: stable for one secret, different for another, never the input.
 */
class FingerprintTest {

    private static final String CANONICAL = "merchantId=m_123\ncard.number=4111111111111111\n";

    @Test
    void theSameCanonicalFormAndSecretGiveTheSameFingerprint() {
        Fingerprint fingerprint = Fingerprint.create("a-secret-of-16-chars");
        assertThat(fingerprint.of(CANONICAL), is(fingerprint.of(CANONICAL)));
        assertThat(fingerprint.of(CANONICAL).length(), is(64));
        assertThat(fingerprint.of(CANONICAL), not(containsString("4111")));
    }

    @Test
    void anotherSecretGivesAnotherFingerprint() {
        assertThat(Fingerprint.create("a-secret-of-16-chars").of(CANONICAL),
                   not(Fingerprint.create("another-secret-16ch").of(CANONICAL)));
    }
}
