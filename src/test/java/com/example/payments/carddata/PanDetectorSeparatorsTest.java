package com.example.payments.carddata;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.sameInstance;

/**
 * Card numbers written with separators other than one space or dash: one or two characters from the Unicode space
 * separators (Zs), dashes (Pd) and format characters (Cf), or {@code . _ / + ,}; found in free text and masked in log
 * lines. The separators are given as escapes, since most of them are invisible.
 */
class PanDetectorSeparatorsTest {

    private static final String LOG_PREFIX = "2026-12-01T05:11:36.413 INFO [4bf92f3577b34da6] "
                                              + "com.example.payments.Main: reference=";

    @ParameterizedTest(name = "U+{0}")
    @CsvSource({
            // ASCII punctuation
            "002E", "005F", "002B", "002C", "002F",
            // Zs: space, no-break space, en quad, thin space, narrow no-break space, ideographic space
            "0020 0020", "00A0", "2000", "2009", "202F", "3000",
            // Pd: hyphen-minus twice, hyphen, en dash, em dash, two-em dash
            "002D 002D", "2010", "2013", "2014", "2E3A",
            // Cf: soft hyphen, zero-width space, zero-width joiner, left-to-right mark, word joiner, BOM as ZWNBSP
            "00AD", "200B", "200D", "200E", "2060", "FEFF",
            // two of different classes
            "002E 0020", "0020 200B", "002C 0020", "2013 00A0", "002F 002F",
    })
    void aCardNumberWithTheseSeparatorsIsFoundInFreeTextAndMaskedInALogLine(String codePoints) {
        String separator = separator(codePoints);
        String pan = String.join(separator, "4111", "1111", "1111", "1111");
        String masked = String.join(separator, "****", "****", "****", "1111");
        assertThat(PanDetector.containsPan(pan), is(true));
        assertThat(PanDetector.containsPan("order " + pan + " of today"), is(true));
        assertThat(PanDetector.mask(pan), is(masked));
        assertThat(PanDetector.mask(LOG_PREFIX + pan + " status=201"), is(LOG_PREFIX + masked + " status=201"));
        // A PAN and its CVC, Amex's layout.
        assertThat(PanDetector.mask(pan + separator + "737"), is(masked + separator + "737"));
        String amex = String.join(separator, "3782", "822463", "10005");
        assertThat(PanDetector.mask(LOG_PREFIX + amex), is(LOG_PREFIX + String.join(separator, "****", "******",
                                                                                      "*0005")));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "4111.1111.1111.1111     | ****.****.****.1111",
            "4111_1111_1111_1111     | ****_****_****_1111",
            "4111+1111+1111+1111     | ****+****+****+1111",
            "4111,1111,1111,1111     | ****,****,****,1111",
            "4111/1111/1111/1111     | ****/****/****/1111",
            "'4111  1111  1111  1111'| '****  ****  ****  1111'",
            "4111 1111.1111-1111     | **** ****.****-1111",
            "4000.0000.0000.0002     | ****.****.****.0002",
            "5555.5555.5555.4444     | ****.****.****.4444",
            "6011.1111.1111.1117     | ****.****.****.1117",
            "4222.2222.2222.2        | ****.****.*222.2",
            "3056.930902.5904        | ****.******.5904",
            "6212.3456.7890.1234.569 | ****.****.****.***4.569",
            "+4111111111111111       | +************1111",
            "(4111.1111.1111.1111)   | (****.****.****.1111)",
    })
    void theIssuesInputsAndTheBrandsLayoutsAreMasked(String text, String masked) {
        assertThat(PanDetector.containsPan(text), is(true));
        assertThat(PanDetector.mask(text), is(masked));
    }

    @ParameterizedTest
    @ValueSource(strings = {
            "4111:1111:1111:1111",              // a colon is no separator: times, ports, IPv6
            "4111\t1111\t1111\t1111",           // nor a control character
            "4111 . 1111 . 1111 . 1111",        // three separators apart
            "4111...1111...1111...1111",
            "41.11.11.11.11.11.11.11",          // Luhn-valid digits, but not laid out as a card number
            "411.111.111.111.111.1",
            "4,111,111,111,111,111",            // thousands separators
            "4\u00A0111\u00A0111\u00A0111\u00A0111\u00A0111",
            "12.99, 45.00, 100.00, 7.50, 1,299.00",
            "10.0.0.1, 10.0.0.2, 192.168.100.200",
            "2026-12-01, 2026-12-02, 2026-12-03",
            "+49 152 59469851",                 // a phone number: its country code is no card's first digits
            "+49 151 68076375",
            "Java 21.0.5+11-LTS, Helidon 4.5.0",
    })
    void otherTextWithTheseSeparatorsIsLeftAlone(String text) {
        assertThat(PanDetector.containsPan(text), is(false));
        assertThat(PanDetector.mask(text), sameInstance(text));
    }

    private static String separator(String codePoints) {
        StringBuilder separator = new StringBuilder();
        for (String hex : codePoints.split(" ")) {
            separator.appendCodePoint(Integer.parseInt(hex, 16));
        }
        return separator.toString();
    }
}
