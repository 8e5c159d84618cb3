package com.example.payments.carddata;

import java.util.BitSet;

import static com.example.payments.carddata.PanDetector.MAX_DIGITS;
import static com.example.payments.carddata.PanDetector.MIN_DIGITS;

/**
 * One run of digits and its groups, and the judgement of its candidates: the stretches of whole groups that
 * {@link PanLayout} lets be a card number, and the windows of a group longer than {@value PanDetector#MAX_DIGITS}
 * digits, each a PAN when its digits pass the Luhn check.
 *
 * <p>Digits glued to a hex letter at either end belong to a hexadecimal token (a UUID, a trace id): a candidate may
 * not start or end there, or one UUID in three hundred would look like a PAN. The same holds at the start of a run
 * that is an international phone number. {@code notFromFirst} and {@code notToLast} say so for the run's first and
 * last digit.
 *
 * @param text         the text the run is in
 * @param positions    the char index of each digit of the run
 * @param digits       how many digits the run holds
 * @param groupStarts  the index (into positions) of each group's first digit
 * @param plainBefore  per group, whether it follows one space or one dash (true for the first group)
 * @param groups       how many groups the run holds
 * @param uuids        the chars of the text's UUID-shaped tokens
 * @param notFromFirst no candidate may start at the run's first digit
 * @param notToLast    no candidate may end at the run's last digit
 */
record DigitRun(CharSequence text, int[] positions, int digits, int[] groupStarts, boolean[] plainBefore,
                int groups, BitSet uuids, boolean notFromFirst, boolean notToLast) {

    private static final int VISIBLE_DIGITS = 4;

    // Sets in result the positions of the digits to mask: every digit of a Luhn-valid candidate but its last four.
    void judge(BitSet result) {
        for (int g = 0; g < groups; g++) {
            int from = groupStarts[g];
            boolean plain = true;
            for (int h = g; h < groups; h++) {
                int to = h + 1 < groups ? groupStarts[h + 1] : digits;
                int count = to - from;
                if (count > MAX_DIGITS) {
                    break;
                }
                plain &= h == g || plainBefore[h];
                if (count >= MIN_DIGITS && (plain || PanLayout.printedLayout(groupStarts, groups, digits, g, h))) {
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
        if (from == 0 && notFromFirst || to == digits && notToLast) {
            return;
        }
        int inUuid = uuids.nextClearBit(positions[from]);
        if (uuids.get(positions[from]) && inUuid > positions[to - 1]) {
            return;
        }
        if (luhnValid(from, to)) {
            for (int k = from; k < to - VISIBLE_DIGITS; k++) {
                result.set(positions[k]);
            }
        }
    }

    private boolean luhnValid(int from, int to) {
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
        return sum % 10 == 0;
    }
}
