package com.example.payments.testing;

import java.util.List;

import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;

class SpellingsTest {

    @Test
    void anEscapedSpellingIsFoundOnceUnescaped() {
        for (String text : List.of("'^https://payments\\.example\\.com/problems$'", "\"com\\\\.example\\\\.payments\"",
                                   "https%3A%2F%2Fpayments.example.com%2Fproblems", "com\\u002Eexample\\u002epayments",
                                   "com&#46;example&#x2E;payments")) {
            String plain = Spellings.unescaped(text);
            assertThat(text, Spellings.holds(plain, "com.example.payments")
                             || Spellings.holds(plain, "https://payments.example.com/problems"), is(true));
        }
    }

    @Test
    void aDottedNameCountsOnlyAsAWholeWord() {
        assertThat(Spellings.holds("<Logger name=\"com.example\"/>", "com.example"), is(true));
        assertThat(Spellings.holds("org.com.example.payments", "com.example.payments"), is(false));
        assertThat(Spellings.holds("\"payments\" + \"-authorization:\"", "payments-authorization"), is(false));
        assertThat(Spellings.holds("image payments-authorization:dev", "payments-authorization"), is(true));
    }
}
