package com.example.payments.config;

import java.util.Comparator;
import java.util.List;
import java.util.Set;

/**
 * The suggestion that follows an unknown key in its error or warning: the known key nearest to it, by section first,
 * then by edit distance.
 */
final class ClosestKey {

    private ClosestKey() {
    }

    /**
     * The candidate nearest to a key: among the candidates of the deepest section the key shares with any of them
     * ({@code warm-up} for {@code warm-up.enabled}; all of them when it shares none, as for a mistyped section), the
     * one at the smallest edit distance (Levenshtein: insertions, deletions, substitutions), the alphabetically first
     * on a tie.
     *
     * @param key        an unknown key, or an environment variable's name
     * @param candidates known keys, or their variables' names
     * @param separator  between sections: {@code .} for keys, {@code _} for variables
     * @return the nearest candidate
     */
    static String closest(String key, Set<String> candidates, char separator) {
        List<String> pool = List.copyOf(candidates);
        for (int end = key.lastIndexOf(separator); end > 0; end = key.lastIndexOf(separator, end - 1)) {
            String section = key.substring(0, end + 1);
            List<String> inSection = candidates.stream().filter(candidate -> candidate.startsWith(section)).toList();
            if (!inSection.isEmpty()) {
                pool = inSection;
                break;
            }
        }
        return pool.stream()
                .min(Comparator.comparingInt((String candidate) -> distance(key, candidate))
                             .thenComparing(Comparator.naturalOrder()))
                .orElseThrow();
    }

    // Levenshtein distance, two rows of the dynamic-programming table.
    static int distance(String a, String b) {
        int[] previous = new int[b.length() + 1];
        int[] current = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            previous[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            current[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int substitution = previous[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
                current[j] = Math.min(substitution, Math.min(previous[j], current[j - 1]) + 1);
            }
            int[] swap = previous;
            previous = current;
            current = swap;
        }
        return previous[b.length()];
    }
}
