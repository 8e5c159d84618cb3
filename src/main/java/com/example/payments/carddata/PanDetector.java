package com.example.payments.carddata;

import java.nio.CharBuffer;
import java.util.Arrays;
import java.util.BitSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Finds text that looks like a card number (PAN): 13 to 19 decimal digits that pass the Luhn check, written together
 * or split into groups by single spaces or dashes ({@code 4111 1111 1111 1111}, {@code 4111-1111-1111-1111}).
 *
 * <p>The rule, for every run of digits in which neighbouring digits are at most one separator apart:
 * <ul>
 *     <li>every stretch of whole groups holding 13 to 19 digits is a candidate (so {@code 4111 1111 1111 1111 737},
 *     a PAN followed by a CVC, is still caught);</li>
 *     <li>inside a group of more than 19 digits, every window of 13 to 19 digits is a candidate (a PAN glued into a
 *     longer number is still a PAN);</li>
 *     <li>a candidate whose digits pass the Luhn check is a PAN.</li>
 * </ul>
 * Hexadecimal ids are not card numbers: a candidate may not start or end where its digits touch a hex letter
 * ({@code a-f}), nor lie wholly inside a UUID-shaped token ({@code 47470277-1795-4328-83ea-...} holds 16 digits one
 * dash apart; without these two rules one random UUID in 350 would look like a PAN). A group of 13 to 19 digits is
 * judged as a whole, so a timestamp in ms or an id that fails the Luhn check is left alone (one in ten such numbers
 * passes it by chance: masking those in a log, or refusing them in free text, is the price of never keeping a PAN).
 * Digits are Unicode decimal digits ({@link Character#digit(char, int)}), so full-width digits count too.
 */
public final class PanDetector {

    /** Shortest PAN in digits (ISO/IEC 7812 allows 8, but no card brand issues fewer than 13 today). */
    public static final int MIN_DIGITS = 13;
    /** Longest PAN in digits (ISO/IEC 7812). */
    public static final int MAX_DIGITS = 19;
    private static final int VISIBLE_DIGITS = 4;
    private static final char MASK = '*';
    private static final Pattern UUID = Pattern.compile(
            "(?<![0-9A-Za-z])[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}(?![0-9A-Za-z])");

    private PanDetector() {
    }

    /**
     * Whether the text contains something that looks like a card number.
     *
     * @param text any text, may be {@code null}
     * @return {@code true} when a PAN-like sequence is found
     */
    public static boolean containsPan(CharSequence text) {
        return text != null && !panDigits(text).isEmpty();
    }

    /**
     * Masks every PAN-like sequence: each of its digits becomes {@code *} except the last four, separators stay
     * ({@code 4111-1111-1111-1111} becomes {@code ****-****-****-1111}, as PCI DSS allows at most the last four on
     * display here).
     *
     * @param text any text, may be {@code null}
     * @return the same instance when nothing was found, else the masked copy (which contains no PAN-like sequence)
     */
    public static String mask(String text) {
        if (text == null) {
            return null;
        }
        BitSet masked = panDigits(text);
        if (masked.isEmpty()) {
            return text;
        }
        char[] chars = text.toCharArray();
        // Masking splits digit runs, and the visible last four could start a new candidate: repeat until none is left.
        while (!masked.isEmpty()) {
            for (int i = masked.nextSetBit(0); i >= 0; i = masked.nextSetBit(i + 1)) {
                chars[i] = MASK;
            }
            masked = panDigits(CharBuffer.wrap(chars));
        }
        return new String(chars);
    }

    // Positions (char indexes) of the digits to mask: every digit of a Luhn-valid candidate except its last four.
    private static BitSet panDigits(CharSequence text) {
        BitSet result = new BitSet();
        // The UUID-shaped tokens are found once per text, and only when a run is long enough to be judged: most log
        // lines hold short digit runs only (a timestamp's), and the regular expression would cost more than the rest.
        BitSet[] uuids = new BitSet[1];
        int length = text.length();
        int i = 0;
        while (i < length) {
            if (!isDigit(text.charAt(i))) {
                i++;
                continue;
            }
            i = scanRun(text, i, uuids, result);
        }
        return result;
    }

    // The chars of UUID-shaped tokens: their digits, 32 hex digits in groups of 8-4-4-4-12, are no card number.
    private static BitSet uuids(CharSequence text) {
        BitSet chars = new BitSet();
        Matcher matcher = UUID.matcher(text);
        while (matcher.find()) {
            chars.set(matcher.start(), matcher.end());
        }
        return chars;
    }

    // Reads one run starting at a digit; returns the index after it.
    // uuids: a one-element holder of the text's UUID chars, filled by the first run that needs them.
    private static int scanRun(CharSequence text, int start, BitSet[] uuids, BitSet result) {
        int length = text.length();
        int end = runEnd(text, start);
        if (end < 0) {
            return -end; // fewer than MIN_DIGITS digits (a timestamp's fields): nothing to judge, nothing allocated
        }
        // Within [start, end) every char is a digit or a separator between two digits (runEnd's rules).
        int[] positions = new int[16];
        int[] groupStarts = new int[8];
        int digits = 0;
        int groups = 0;
        groupStarts[groups++] = 0;
        for (int i = start; i < end; i++) {
            if (isDigit(text.charAt(i))) {
                positions = grow(positions, digits);
                positions[digits++] = i;
            } else {
                groupStarts = grow(groupStarts, groups);
                groupStarts[groups++] = digits;
            }
        }
        if (uuids[0] == null) {
            uuids[0] = uuids(text);
        }
        Run run = new Run(text, positions, digits, groupStarts, groups, uuids[0],
                          start > 0 && isHexLetter(text.charAt(start - 1)),
                          end < length && isHexLetter(text.charAt(end)));
        run.judge(result);
        return end;
    }

    // The end of the run starting at a digit: digits, and single spaces or dashes between two digits. Negated when the
    // run holds fewer than MIN_DIGITS digits.
    private static int runEnd(CharSequence text, int start) {
        int length = text.length();
        int digits = 0;
        int i = start;
        while (i < length) {
            char c = text.charAt(i);
            if (isDigit(c)) {
                digits++;
                i++;
            } else if ((c == ' ' || c == '-') && i + 1 < length && isDigit(text.charAt(i + 1))) {
                i++;
            } else {
                break;
            }
        }
        return digits >= MIN_DIGITS ? i : -i;
    }

    /**
     * One run of digits and its groups. Digits glued to a hex letter at either end belong to a hexadecimal token (a
     * UUID, a trace id): a candidate may not start or end there, or one UUID in three hundred would look like a PAN.
     */
    private record Run(CharSequence text, int[] positions, int digits, int[] groupStarts, int groups, BitSet uuids,
                       boolean hexBefore, boolean hexAfter) {

        void judge(BitSet result) {
            for (int g = 0; g < groups; g++) {
                int from = groupStarts[g];
                for (int h = g; h < groups; h++) {
                    int to = h + 1 < groups ? groupStarts[h + 1] : digits;
                    int count = to - from;
                    if (count > MAX_DIGITS) {
                        break;
                    }
                    if (count >= MIN_DIGITS) {
                        candidate(from, to, result);
                    }
                }
                int groupEnd = g + 1 < groups ? groupStarts[g + 1] : digits;
                if (groupEnd - from > MAX_DIGITS) {
                    for (int w = MIN_DIGITS; w <= MAX_DIGITS; w++) {
                        for (int s = from; s + w <= groupEnd; s++) {
                            candidate(s, s + w, result);
                        }
                    }
                }
            }
        }

        private void candidate(int from, int to, BitSet result) {
            if (from == 0 && hexBefore || to == digits && hexAfter) {
                return;
            }
            int inUuid = uuids.nextClearBit(positions[from]);
            if (uuids.get(positions[from]) && inUuid > positions[to - 1]) {
                return;
            }
            PanDetector.judge(text, positions, from, to, result);
        }
    }

    private static void judge(CharSequence text, int[] positions, int from, int to, BitSet result) {
        int sum = 0;
        boolean doubleIt = false;
        for (int k = to - 1; k >= from; k--) {
            int d = Character.digit(text.charAt(positions[k]), 10);
            if (doubleIt) {
                d = d * 2 > 9 ? d * 2 - 9 : d * 2;
            }
            sum += d;
            doubleIt = !doubleIt;
        }
        if (sum % 10 == 0) {
            for (int k = from; k < to - VISIBLE_DIGITS; k++) {
                result.set(positions[k]);
            }
        }
    }

    private static boolean isHexLetter(char c) {
        return c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F';
    }

    private static boolean isDigit(char c) {
        return c >= '0' && c <= '9' || c > 127 && Character.digit(c, 10) >= 0;
    }

    private static int[] grow(int[] array, int used) {
        return used < array.length ? array : Arrays.copyOf(array, array.length * 2);
    }
}
