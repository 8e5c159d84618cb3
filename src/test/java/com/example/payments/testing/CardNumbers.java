package com.example.payments.testing;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The tests' own card-number oracle, independent of the production {@code carddata.PanDetector} it checks: a run of
 * 13 to 19 digits that passes the Luhn check (ISO/IEC 7812-1), single spaces or dashes between the digits allowed.
 */
public final class CardNumbers {

    private static final Pattern DIGIT_RUN = Pattern.compile("\\d(?:[ -]?\\d)*");

    private CardNumbers() {
    }

    /**
     * Whether a text holds a card number: some window of 13 to 19 digits of one of its digit runs passes the Luhn check.
     *
     * @param text any text (a log line, a span's attributes)
     * @return true when a Luhn-valid window of 13 to 19 digits is in it
     */
    public static boolean in(String text) {
        Matcher run = DIGIT_RUN.matcher(text);
        while (run.find()) {
            if (luhnWindow(run.group().replaceAll("[ -]", ""))) {
                return true;
            }
        }
        return false;
    }

    /**
     * Whether some window of 13 to 19 consecutive digits of a digit string passes the Luhn check.
     *
     * @param digits ASCII digits only
     * @return true when such a window exists
     */
    public static boolean luhnWindow(String digits) {
        for (int length = 13; length <= Math.min(19, digits.length()); length++) {
            for (int start = 0; start + length <= digits.length(); start++) {
                if (luhn(digits.subSequence(start, start + length))) {
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * The Luhn check (ISO/IEC 7812-1, annex B): from the right, every second digit doubled (minus 9 above 9), the sum
     * a multiple of 10.
     *
     * @param digits ASCII digits only
     * @return whether they pass
     */
    public static boolean luhn(CharSequence digits) {
        int sum = 0;
        for (int i = 0; i < digits.length(); i++) {
            int d = digits.charAt(digits.length() - 1 - i) - '0';
            sum += i % 2 == 1 ? (d * 2 > 9 ? d * 2 - 9 : d * 2) : d;
        }
        return sum % 10 == 0;
    }
}
