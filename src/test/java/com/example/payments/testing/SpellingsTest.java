package com.example.payments.testing;

import java.util.List;

import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;

class SpellingsTest {

    @Test
    void anEscapedSpellingIsFoundOnceUnescaped() {
        for (String text : List.of("'^https://errors\\.sample\\.test/problems$'", "\"org\\\\.sample\\\\.service\"",
                                   "https%3A%2F%2Ferrors.sample.test%2Fproblems", "org\\u002Esample\\u002eservice",
                                   "org&#46;sample&#x2E;service")) {
            String plain = Spellings.unescaped(text);
            assertThat(text, Spellings.holds(plain, "org.sample.service")
                             || Spellings.holds(plain, "https://errors.sample.test/problems"), is(true));
        }
    }

    @Test
    void aDottedNameCountsOnlyAsAWholeWord() {
        assertThat(Spellings.holds("<Logger name=\"org.sample\"/>", "org.sample"), is(true));
        assertThat(Spellings.holds("org.org.sample.service", "org.sample.service"), is(false));
        assertThat(Spellings.holds("\"sample\" + \"-service:\"", "sample-service"), is(false));
        assertThat(Spellings.holds("image sample-service:dev", "sample-service"), is(true));
    }
}
