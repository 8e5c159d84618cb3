package com.example.payments.carddata;

import java.util.BitSet;
import java.util.function.Function;

/**
 * Card numbers written with digits outside the Basic Multilingual Plane (mathematical digits {@code U+1D7CE..1D7FF},
 * Adlam, Osmanya, segmented digits...), two chars each: the text is judged with each such digit folded to one ASCII
 * digit, and the positions found are mapped back to both chars of each, so that masking covers them whole.
 */
final class SupplementaryDigits {

    private SupplementaryDigits() {
    }

    /**
     * Judges a text holding digits written as two chars.
     *
     * @param text  the text
     * @param judge {@link PanDetector}'s judgement of a text whose digits are one char each: the char positions to
     *              mask, or {@code null}
     * @return the positions in {@code text} to mask (both chars of a folded digit), or {@code null} when none
     */
    static BitSet judge(CharSequence text, Function<CharSequence, BitSet> judge) {
        int length = text.length();
        StringBuilder folded = new StringBuilder(length);
        int[] origin = new int[length];
        for (int i = 0; i < length; ) {
            int codePoint = Character.codePointAt(text, i);
            int chars = Character.charCount(codePoint);
            int digit = chars == 2 ? Character.digit(codePoint, 10) : -1;
            origin[folded.length()] = i;
            if (digit >= 0) {
                folded.append((char) ('0' + digit));
            } else {
                folded.append(text.charAt(i));
                if (chars == 2) {
                    origin[folded.length()] = i + 1;
                    folded.append(text.charAt(i + 1));
                }
            }
            i += chars;
        }
        BitSet found = judge.apply(folded);
        if (found == null) {
            return null;
        }
        BitSet result = new BitSet();
        for (int j = found.nextSetBit(0); j >= 0; j = found.nextSetBit(j + 1)) {
            int at = origin[j];
            result.set(at);
            if (Character.isHighSurrogate(text.charAt(at))) {
                result.set(at + 1);
            }
        }
        return result;
    }
}
