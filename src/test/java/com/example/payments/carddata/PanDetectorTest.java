package com.example.payments.carddata;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.sameInstance;

/**
 * What the masker treats as a card number, and what it leaves alone.
 */
class PanDetectorTest {

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "4111111111111111                 | ************1111",
            "card 4111111111111111.            | card ************1111.",
            "4111 1111 1111 1111              | **** **** **** 1111",
            "4111-1111-1111-1111              | ****-****-****-1111",
            "378282246310005                  | ***********0005",
            "3782 822463 10005                | **** ****** *0005",
            "6011111111111117                 | ************1117",
            "4000000000000002                 | ************0002",
            "number\":\"5555555555554444\",\"cvc | number\":\"************4444\",\"cvc",
            "x4111111111111111y               | x************1111y",
            "4111 1111 1111 1111 737          | **** **** **** 1111 737",
            "2026-11-30, 4111-1111-1111-1111  | 2026-11-30, ****-****-****-1111",
            "６０１１１１１１１１１１１１１７  | ************１１１７",
    })
    void aLuhnValidCardNumberIsMaskedButItsLastFourDigits(String text, String masked) {
        assertThat(PanDetector.containsPan(text), is(true));
        assertThat(PanDetector.mask(text), is(masked));
    }

    @Test
    void inALogLineTheTimestampsShortRunsAreSkippedAndTheCardNumberAfterThemIsMasked() {
        assertThat(PanDetector.mask("2026-12-01T05:11:36.413 INFO [] card 4111111111111111"),
                   is("2026-12-01T05:11:36.413 INFO [] card ************1111"));
        String uuid = "47470277-1795-4328-83ea-0123456789ab";
        assertThat(PanDetector.mask("12:30:01.5 x 4111-1111-1111-1111 id " + uuid),
                   is("12:30:01.5 x ****-****-****-1111 id " + uuid));
        String line = "2026-12-01T05:11:36.413 INFO [] status=201 duration_ms=0.2 request_id=" + uuid;
        assertThat(PanDetector.mask(line), is(sameInstance(line)));
    }

    @Test
    void aCardNumberGluedIntoALongerNumberIsMasked() {
        String masked = PanDetector.mask("id=99994111111111111111");
        assertThat(PanDetector.containsPan(masked), is(false));
        assertThat(masked.contains("411111111111"), is(false));
    }

    @Test
    void twoCardNumbersOnOneLineAreBothMasked() {
        assertThat(PanDetector.mask("from 4111111111111111 to 5555-5555-5555-4444"),
                   is("from ************1111 to ****-****-****-4444"));
    }

    @ParameterizedTest
    @ValueSource(strings = {
            "4111111111111112",                 // Luhn check fails
            "1764532000123",                    // a timestamp in ms that fails the Luhn check
            "1764532000124 ms",
            "411111111111",                     // 12 digits: shorter than any card number
            "2026-11-30T20:05:17.979",          // a timestamp
            "0x19b8f634 0x7a3e9b12",            // ids in hex
            "4111   1111   1111   1111",        // three separators apart: not one number
            "47470277-1795-4328-83ea-3a2051c9a4c4",  // a UUID whose digits would pass the Luhn check
            "af5c514c-8e4c-46bc-9418-222196080623",
            "8f6753cd-0751-4298-9190-745609bbe3c6",  // digits glued to hex letters at both ends
            "port 8080, 8081; 1705 milliseconds",
            "",
    })
    void numbersThatAreNoCardNumbersAreLeftAlone(String text) {
        assertThat(PanDetector.containsPan(text), is(false));
        assertThat(PanDetector.mask(text), sameInstance(text));
    }

    @Test
    void randomUuidsAreNoCardNumbers() {
        for (int i = 0; i < 100_000; i++) {
            String uuid = java.util.UUID.randomUUID().toString();
            assertThat(uuid, PanDetector.containsPan(uuid), is(false));
        }
    }

    @Test
    void aCardNumberNextToAUuidIsStillMasked() {
        assertThat(PanDetector.mask("id 47470277-1795-4328-83ea-3a2051c9a4c4 card 4111 1111 1111 1111"),
                   is("id 47470277-1795-4328-83ea-3a2051c9a4c4 card **** **** **** 1111"));
    }

    @Test
    void digitsOutsideTheBasicMultilingualPlaneCountOneEachAndAreMaskedBothChars() {
        String bold = "4111111111111111".codePoints().map(c -> 0x1D7CE + c - '0')
                .collect(StringBuilder::new, StringBuilder::appendCodePoint, StringBuilder::append).toString();
        assertThat(PanDetector.containsPan(bold), is(true));
        assertThat(PanDetector.mask("card " + bold + " \uD83D\uDE00"),
                   is("card " + "**".repeat(12) + bold.substring(24) + " \uD83D\uDE00"));
        assertThat("mixed with ASCII digits", PanDetector.containsPan(bold.substring(0, 2) + "111111111111111"),
                   is(true));
        String notLuhn = bold.substring(0, bold.length() - 2) + new String(Character.toChars(0x1D7CE + 2));
        assertThat(PanDetector.containsPan(notLuhn), is(false));
        String emoji = "paid \uD83D\uDE00 4111";
        assertThat(PanDetector.mask(emoji), sameInstance(emoji));
    }

    @Test
    void nullIsNoCardNumber() {
        assertThat(PanDetector.containsPan(null), is(false));
        assertThat(PanDetector.mask(null), is((String) null));
    }

    @Test
    void aMaskedTextContainsNoCardNumberAnyMore() {
        StringBuilder digits = new StringBuilder();
        java.util.Random random = new java.util.Random(42);
        for (int i = 0; i < 2000; i++) {
            digits.append(random.nextInt(10));
            if (random.nextInt(7) == 0) {
                digits.append(random.nextBoolean() ? ' ' : '-');
            }
        }
        String masked = PanDetector.mask(digits.toString());
        assertThat(PanDetector.containsPan(masked), is(false));
        assertThat(masked.length(), is(digits.length()));
    }
}
