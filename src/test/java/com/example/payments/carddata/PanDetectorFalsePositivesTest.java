package com.example.payments.carddata;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.example.payments.testing.CardNumbers;

import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.lessThanOrEqualTo;

/**
 * The separators the detector accepts between digit groups (spaces, dashes, format characters and {@code . _ / + ,})
 * also write timestamps, addresses, amounts, dates and versions: on 12,100 realistic strings that hold no card number,
 * at most 0.1 % may be flagged.
 */
class PanDetectorFalsePositivesTest {

    private static final long SEED = 20261201L;
    private static final int COUNT = 12_100;
    private static final String NAIVE_SEPARATOR = "[\\p{Zs}\\p{Pd}\\p{Cf}._/+,]{1,2}";
    private static final Pattern NAIVE_RUN = Pattern.compile("[0-9]+(?:" + NAIVE_SEPARATOR + "[0-9]+)*");

    @Test
    void atMostOneInAThousandOrdinaryStringsIsTakenForACardNumber() {
        List<String> strings = OrdinaryText.strings(SEED, COUNT);
        List<OrdinaryText.Kind> kinds = OrdinaryText.kinds();
        Map<String, Integer> flaggedByKind = new LinkedHashMap<>();
        int flagged = 0;
        for (int i = 0; i < strings.size(); i++) {
            String text = strings.get(i);
            if (PanDetector.containsPan(text)) {
                flagged++;
                flaggedByKind.merge(kinds.get(i % kinds.size()).name(), 1, Integer::sum);
                System.out.println("flagged: " + PanDetector.mask(text) + "   <- " + text);
            }
        }
        double rate = 100.0 * flagged / strings.size();
        System.out.printf("PanDetector false positives: %d of %d ordinary strings (%.3f %%), by kind %s%n", flagged,
                          strings.size(), rate, flaggedByKind);
        assertThat(String.format("%.3f %% flagged: %s", rate, flaggedByKind), flagged * 1000,
                   lessThanOrEqualTo(strings.size()));
    }

    @Test
    void withoutItsLayoutAndPhoneRulesTheDetectorWouldFlagFarMoreOfTheseStrings() {
        // The strings are not easy: a detector that took every Luhn-valid stretch of whole groups one or two of the
        // same separators apart for a card number would flag several percent of them.
        int naive = 0;
        List<String> strings = OrdinaryText.strings(SEED, COUNT);
        for (String text : strings) {
            if (naiveRule(text)) {
                naive++;
            }
        }
        double rate = 100.0 * naive / strings.size();
        System.out.printf("Without the layout and phone rules: %d of %d flagged (%.3f %%)%n", naive, strings.size(),
                          rate);
        assertThat(naive * 100, greaterThan(strings.size()));
    }

    private static boolean naiveRule(String text) {
        Matcher run = NAIVE_RUN.matcher(text);
        while (run.find()) {
            String[] groups = run.group().split(NAIVE_SEPARATOR);
            for (int g = 0; g < groups.length; g++) {
                StringBuilder digits = new StringBuilder();
                for (int h = g; h < groups.length && digits.length() + groups[h].length() <= 19; h++) {
                    digits.append(groups[h]);
                    if (digits.length() >= 13 && CardNumbers.luhn(digits)) {
                        return true;
                    }
                }
            }
        }
        return false;
    }

    @Test
    void theSameStringsMaskedAreLeftAsTheyWere() {
        // The masker shares the detector: what is not flagged comes back as the same instance.
        int changed = 0;
        List<String> strings = OrdinaryText.strings(SEED, COUNT);
        for (String text : strings) {
            if (PanDetector.mask(text) != text) {
                changed++;
            }
        }
        assertThat(changed * 1000, lessThanOrEqualTo(strings.size()));
    }

    @Test
    void theStringsAreMadeDeterministically() {
        assertThat(OrdinaryText.strings(SEED, 50), is(OrdinaryText.strings(SEED, 50)));
    }
}
