package com.example.payments.carddata;

import java.nio.CharBuffer;
import java.util.Arrays;
import java.util.BitSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Finds text that looks like a card number (PAN): 13 to 19 decimal digits that pass the Luhn check, written together
 * or split into groups ({@code 4111 1111 1111 1111}, {@code 4111-1111-1111-1111}, {@code 4111.1111.1111.1111}).
 *
 * <p>Digits are grouped into a run when they are at most two separator characters apart. A separator is a Unicode
 * space separator (Zs: space, no-break space, thin space...), a dash (Pd: hyphen-minus, en dash, em dash...), a format
 * character (Cf: zero-width space, soft hyphen, word joiner, directional marks...) or one of {@code . _ / + ,}; a
 * colon is not (times, ports, IPv6). The rule, for every run:
 * <ul>
 *     <li>every stretch of whole groups holding 13 to 19 digits is a candidate (so {@code 4111 1111 1111 1111 737},
 *     a PAN followed by a CVC, is still caught) when its groups are apart by one space or one dash each, the way card
 *     numbers have always been written;</li>
 *     <li>a stretch with any other separator between two of its groups (a dot, a comma, two spaces, a zero-width
 *     space, an en dash...) is a candidate only when its groups are laid out as card numbers are printed: groups of 4
 *     digits, the last of 1 to 5 ({@code 4111.1111.1111.1111}, {@code 4111.1111.1111.1111.111}), or 4-6-4 and 4-6-5
 *     (Diners, Amex). These separators also write amounts ({@code 12.99, 45.00}), dates, IPv4 addresses, versions
 *     and phone numbers, whose groups are shorter or uneven: without the layout rule one list of amounts in ten would
 *     look like a PAN;</li>
 *     <li>inside a group of more than 19 digits, every window of 13 to 19 digits is a candidate (a PAN glued into a
 *     longer number is still a PAN);</li>
 *     <li>a candidate whose digits pass the Luhn check is a PAN.</li>
 * </ul>
 * Hexadecimal ids are not card numbers: a candidate may not start or end where its digits touch a hex letter
 * ({@code a-f}), nor lie wholly inside a UUID-shaped token ({@code 47470277-1795-4328-83ea-...} holds 16 digits one
 * dash apart; without these two rules one random UUID in 350 would look like a PAN). A group of 13 to 19 digits is
 * judged as a whole, so a timestamp in ms or an id that fails the Luhn check is left alone (one in ten such numbers
 * passes it by chance: masking those in a log, or refusing them in free text, is the price of never keeping a PAN).
 * Digits are Unicode decimal digits ({@link Character#digit(int, int)}), so full-width digits count too, and so do
 * those outside the Basic Multilingual Plane, written as two chars (mathematical digits {@code U+1D7CE..1D7FF},
 * Adlam, Osmanya, segmented digits...): a text holding one is judged with each such digit as one digit, and masking
 * turns both of its chars into {@code *}.
 *
 * <p>Cost: every log line goes through {@link #mask}; a line whose digit runs cannot hold a candidate (fewer than 13
 * digits, or groups not laid out as above: timestamps, lists of amounts, dates or addresses) allocates nothing.
 */
public final class PanDetector {

    /** Shortest PAN in digits (ISO/IEC 7812 allows 8, but no card brand issues fewer than 13 today). */
    public static final int MIN_DIGITS = 13;
    /** Longest PAN in digits (ISO/IEC 7812). */
    public static final int MAX_DIGITS = 19;
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
        return text != null && panDigits(text) != null;
    }

    /**
     * The Luhn check (ISO/IEC 7812-1 annex B) of the ASCII digits {@code digits[from, to)}: the check every card number
     * passes.
     *
     * @param digits text whose chars in the range are {@code 0-9}
     * @param from   first char, inclusive
     * @param to     last char, exclusive
     * @return {@code true} when the digits pass it
     */
    public static boolean luhnValid(CharSequence digits, int from, int to) {
        int sum = 0;
        boolean doubleIt = false;
        for (int i = to - 1; i >= from; i--) {
            int digit = digits.charAt(i) - '0';
            if (doubleIt) {
                digit = digit * 2 > 9 ? digit * 2 - 9 : digit * 2;
            }
            sum += digit;
            doubleIt = !doubleIt;
        }
        return sum % 10 == 0;
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
        if (masked == null) {
            return text;
        }
        char[] chars = text.toCharArray();
        // Masking splits digit runs, and the visible last four could start a new candidate: repeat until none is left.
        while (masked != null) {
            for (int i = masked.nextSetBit(0); i >= 0; i = masked.nextSetBit(i + 1)) {
                chars[i] = MASK;
            }
            masked = panDigits(CharBuffer.wrap(chars));
        }
        return new String(chars);
    }

    // Positions (char indexes) of the digits to mask: every digit of a Luhn-valid candidate except its last four;
    // null when there are none. Nothing is allocated until a run may hold a candidate (most log lines hold none), or
    // the text holds a digit written as two chars (then it is judged folded, one char per digit, and mapped back).
    private static BitSet panDigits(CharSequence text) {
        int length = text.length();
        for (int i = 0; i + 1 < length; i++) {
            if (Character.isHighSurrogate(text.charAt(i)) && Character.isLowSurrogate(text.charAt(i + 1))
                && Character.digit(Character.toCodePoint(text.charAt(i), text.charAt(i + 1)), 10) >= 0) {
                return SupplementaryDigits.judge(text, PanDetector::panDigitsOfChars);
            }
        }
        return panDigitsOfChars(text);
    }

    private static BitSet panDigitsOfChars(CharSequence text) {
        BitSet result = null;
        // The UUID-shaped tokens are found once per text, and only when a run is long enough to be judged: the
        // regular expression would cost more than the rest.
        BitSet[] uuids = null;
        int length = text.length();
        int i = 0;
        while (i < length) {
            if (!PanLayout.isDigit(text.charAt(i))) {
                i++;
                continue;
            }
            int end = PanLayout.runEnd(text, i);
            if (end < 0) {
                i = -end; // no candidate possible (a timestamp's fields, a list of amounts)
                continue;
            }
            if (result == null) {
                result = new BitSet();
                uuids = new BitSet[1];
            }
            scanRun(text, i, end, uuids, result);
            i = end;
        }
        return result == null || result.isEmpty() ? null : result;
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

    // Judges the run [start, end) that PanLayout.runEnd found may hold a candidate.
    // uuids: a one-element holder of the text's UUID chars, filled by the first run that needs them.
    private static void scanRun(CharSequence text, int start, int end, BitSet[] uuids, BitSet result) {
        int length = text.length();
        // Within [start, end) every char is a digit or one of one or two separators between two digits (PanLayout's
        // rules). plainBefore[g]: group g follows one space or dash (always true for the first group).
        int[] positions = new int[16];
        int[] groupStarts = new int[8];
        boolean[] plainBefore = new boolean[8];
        int digits = 0;
        int groups = 0;
        plainBefore[groups] = true;
        groupStarts[groups++] = 0;
        int i = start;
        while (i < end) {
            if (PanLayout.isDigit(text.charAt(i))) {
                positions = grow(positions, digits);
                positions[digits++] = i;
                i++;
            } else {
                int separators = PanLayout.separatorsBeforeDigit(text, i);
                groupStarts = grow(groupStarts, groups);
                plainBefore = grow(plainBefore, groups);
                plainBefore[groups] = PanLayout.isPlain(text, i, separators);
                groupStarts[groups++] = digits;
                i += separators;
            }
        }
        if (uuids[0] == null) {
            uuids[0] = uuids(text);
        }
        boolean phone = PanLayout.isPhone(text, start, groupStarts, groups);
        DigitRun run = new DigitRun(text, positions, digits, groupStarts, plainBefore, groups, uuids[0],
                                    start > 0 && isHexLetter(text.charAt(start - 1)) || phone,
                                    end < length && isHexLetter(text.charAt(end)));
        run.judge(result);
    }

    private static boolean isHexLetter(char c) {
        return c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F';
    }

    private static int[] grow(int[] array, int used) {
        return used < array.length ? array : Arrays.copyOf(array, array.length * 2);
    }

    private static boolean[] grow(boolean[] array, int used) {
        return used < array.length ? array : Arrays.copyOf(array, array.length * 2);
    }
}
