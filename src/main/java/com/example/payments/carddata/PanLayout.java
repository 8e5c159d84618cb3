package com.example.payments.carddata;

import static com.example.payments.carddata.PanDetector.MIN_DIGITS;

/**
 * How the digits of a card number may be written: which characters join digit groups into a run, which separators
 * need the groups laid out as card numbers are printed (4-4-4-4 with a last group of 1 to 5, 4-6-4, 4-6-5), and the
 * {@code +} of an international phone number. Every method is static and allocates nothing: each log line's digits
 * go through them.
 */
final class PanLayout {

    private PanLayout() {
    }

    // A Unicode decimal digit (Character.digit), so full-width digits count too.
    static boolean isDigit(char c) {
        return c >= '0' && c <= '9' || c > 127 && Character.digit(c, 10) >= 0;
    }

    // The end of the run starting at a digit: digits, and runs of one or two separators between two digits. Negated
    // when the run cannot hold a candidate: fewer than MIN_DIGITS digits, or no stretch of groups one space or dash
    // apart long enough and no chain of groups that could be laid out as a card number (a group of 4, then groups of
    // 4 or 6, then any group: a list of dates or amounts has none).
    static int runEnd(CharSequence text, int start) {
        int length = text.length();
        int digits = 0;
        int plainStretch = 0;   // digits of the current stretch of groups one space or dash apart
        int longestPlain = 0;
        int group = 0;          // digits of the current group
        int chain = 0;          // digits of the current chain that could start a printed layout
        boolean layout = false;
        int i = start;
        while (i < length) {
            char c = text.charAt(i);
            if (isDigit(c)) {
                digits++;
                group++;
                plainStretch++;
                i++;
                continue;
            }
            int separators = separatorsBeforeDigit(text, i);
            if (separators == 0) {
                break;
            }
            layout |= chain > 0 && chain + group >= MIN_DIGITS;
            chain = chain > 0 && (group == 4 || group == 6) ? chain + group : group == 4 ? 4 : 0;
            longestPlain = Math.max(longestPlain, plainStretch);
            if (!isPlain(text, i, separators)) {
                plainStretch = 0;
            }
            group = 0;
            i += separators;
        }
        layout |= chain > 0 && chain + group >= MIN_DIGITS;
        longestPlain = Math.max(longestPlain, plainStretch);
        boolean mayHold = digits >= MIN_DIGITS && (longestPlain >= MIN_DIGITS || layout);
        return mayHold ? i : -i;
    }

    // How many separators (1 or 2) start at i and are followed by a digit; 0 when none are.
    static int separatorsBeforeDigit(CharSequence text, int i) {
        int length = text.length();
        if (!isSeparator(text.charAt(i))) {
            return 0;
        }
        if (i + 1 < length && isDigit(text.charAt(i + 1))) {
            return 1;
        }
        return i + 2 < length && isSeparator(text.charAt(i + 1)) && isDigit(text.charAt(i + 2)) ? 2 : 0;
    }

    // One space or one dash: the separators card numbers were always written with, judged without the layout rule.
    static boolean isPlain(CharSequence text, int i, int separators) {
        char c = text.charAt(i);
        return separators == 1 && (c == ' ' || c == '-');
    }

    // An international phone number (+49 151 23456789: a plus, a country code of 1 to 3 digits, more groups) is no
    // card number from its first digit on; a PAN written after a plus in one piece is still judged.
    static boolean isPhone(CharSequence text, int start, int[] groupStarts, int groups) {
        return start > 0 && text.charAt(start - 1) == '+' && groups > 1 && groupStarts[1] <= 3;
    }

    // Groups g to h (of a run whose groups start at groupStarts, digits in all) as card numbers are printed:
    // 4-4-...-4 with a last group of 1 to 5 digits, 4-6-4 or 4-6-5.
    static boolean printedLayout(int[] groupStarts, int groups, int digits, int g, int h) {
        if (size(groupStarts, groups, digits, g) != 4) {
            return false;
        }
        if (h == g + 2 && size(groupStarts, groups, digits, g + 1) == 6) {
            int last = size(groupStarts, groups, digits, h);
            if (last == 4 || last == 5) {
                return true;
            }
        }
        for (int k = g + 1; k < h; k++) {
            if (size(groupStarts, groups, digits, k) != 4) {
                return false;
            }
        }
        int last = size(groupStarts, groups, digits, h);
        return last >= 1 && last <= 5;
    }

    // Zs, Pd, Cf, and . _ / + , (not ':').
    private static boolean isSeparator(char c) {
        if (c < 128) {
            return c == ' ' || c == '-' || c == '.' || c == '_' || c == '/' || c == '+' || c == ',';
        }
        int type = Character.getType(c);
        return type == Character.SPACE_SEPARATOR || type == Character.DASH_PUNCTUATION || type == Character.FORMAT;
    }

    private static int size(int[] groupStarts, int groups, int digits, int group) {
        return (group + 1 < groups ? groupStarts[group + 1] : digits) - groupStarts[group];
    }
}
