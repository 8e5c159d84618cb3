package com.example.payments.testing;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Finds a name in a text in any spelling a file may give it: plain, or with its punctuation escaped as in a regular
 * expression or a Java string ({@code org\\.sample}), percent-encoded ({@code org%2Fsample}), as a
 * backslash-u escape or an HTML character reference. {@code RenameIT} uses it to prove that no old name survives a
 * rename.
 */
public final class Spellings {

    /** An escaped punctuation character: backslashes, percent-encoding, a unicode escape, an HTML reference. */
    private static final Pattern ESCAPED = Pattern.compile(
            "\\\\+u00([0-9A-Fa-f]{2})|%([0-9A-Fa-f]{2})|&#([0-9]+);|&#[xX]([0-9A-Fa-f]+);|\\\\+([./:_-])");

    private Spellings() {
    }

    /**
     * The text with every escaped punctuation character ({@code . : / _ -}) written plainly.
     *
     * @param text any text
     * @return the text, e.g. {@code org.sample} for {@code org\\.sample} or {@code org%2Esample}
     */
    public static String unescaped(String text) {
        return ESCAPED.matcher(text).replaceAll(match -> {
            String hex = match.group(1) != null ? match.group(1) : match.group(2) != null ? match.group(2)
                    : match.group(4);
            int code = hex != null ? Integer.parseInt(hex, 16)
                    : match.group(3) != null ? Integer.parseInt(match.group(3)) : match.group(5).charAt(0);
            return code < 0x80 && ".:/_-".indexOf(code) >= 0 ? Matcher.quoteReplacement(String.valueOf((char) code))
                    : Matcher.quoteReplacement(match.group());
        });
    }

    /**
     * Whether the text holds the name: a dotted lower-case name (a package, a host) as a whole word, so that a longer
     * package or host that merely contains it does not count; any other name anywhere.
     *
     * @param text the text, plain or {@link #unescaped}
     * @param name e.g. {@code org.sample.service}
     * @return {@code true} when found
     */
    public static boolean holds(String text, String name) {
        return Pattern.compile("(?<![A-Za-z0-9_.])" + Pattern.quote(name) + "(?![A-Za-z0-9_])").matcher(text).find()
               || !name.matches("[a-z0-9]+(\\.[a-z0-9]+)+") && text.contains(name);
    }
}
