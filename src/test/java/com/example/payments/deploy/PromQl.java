package com.example.payments.deploy;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Reads the series selectors and grouping labels out of a PromQL expression, so that tests can check them against a
 * real scrape. Not a full parser ({@code promtool check rules} is the syntax check): it walks the tokens, skips
 * strings, numbers, durations, ranges and subqueries ({@code [5m]}, {@code [1h:1m]}), comments, Grafana variables
 * ({@code $pod}, {@code ${__range}}), keywords and operators, and takes every other identifier as a metric name unless
 * a {@code (} follows it (a function or an aggregation). The label lists of {@code by}, {@code without}, {@code on},
 * {@code ignoring}, {@code group_left} and {@code group_right} are returned as grouping labels, never as metrics.
 */
final class PromQl {

    // Case-insensitive in PromQL. Aggregations and functions need no list: a '(' (or 'by'/'without') follows them.
    private static final Set<String> GROUPING = Set.of("by", "without", "on", "ignoring", "group_left", "group_right");
    private static final Set<String> KEYWORDS = Set.of("and", "or", "unless", "bool", "offset", "atan2", "inf", "nan");
    private static final Set<String> OPERATORS = Set.of("=", "!=", "=~", "!~");

    /**
     * One label matcher, e.g. {@code type="readiness"}.
     *
     * @param label label name
     * @param op    {@code =}, {@code !=}, {@code =~} or {@code !~}
     * @param value the value as written, unescaped (may hold a Grafana variable such as {@code $pod})
     */
    record LabelMatcher(String label, String op, String value) {
        @Override
        public String toString() {
            return label + op + '"' + value + '"';
        }
    }

    /**
     * A series selector.
     *
     * @param metric   metric name (from {@code __name__="..."} when written as a matcher); {@code null} when the
     *                 selector names no metric (e.g. {@code {__name__=~"http_.*"}})
     * @param matchers label matchers other than the metric name
     */
    record Selector(String metric, List<LabelMatcher> matchers) {
        @Override
        public String toString() {
            return (metric == null ? "" : metric) + matchers;
        }
    }

    /**
     * What an expression selects.
     *
     * @param selectors      selectors in order of appearance
     * @param groupingLabels labels named in {@code by (...)}, {@code on (...)} and the like
     */
    record Parsed(List<Selector> selectors, Set<String> groupingLabels) {
    }

    private final String text;
    private int pos;
    private final List<Selector> selectors = new ArrayList<>();
    private final Set<String> groupingLabels = new LinkedHashSet<>();

    private PromQl(String text) {
        this.text = text;
    }

    /**
     * Reads an expression.
     *
     * @param expression PromQL, possibly with Grafana variables
     * @return its selectors and grouping labels
     * @throws IllegalArgumentException on an unterminated string, an unbalanced bracket or a character PromQL does
     *                                  not have, naming the position
     */
    static Parsed parse(String expression) {
        PromQl parser = new PromQl(expression);
        parser.expression();
        return new Parsed(List.copyOf(parser.selectors), Set.copyOf(parser.groupingLabels));
    }

    private void expression() {
        int depth = 0;
        while (skipSpaceAndComments()) {
            char c = text.charAt(pos);
            if (c == '"' || c == '\'' || c == '`') {
                string();
            } else if (c == '{') {
                selector(null);
            } else if (c == '[') {
                skipBracket();
            } else if (c == '$') {
                variable();
            } else if (Character.isDigit(c) || c == '.' && pos + 1 < text.length() && Character.isDigit(text.charAt(pos + 1))) {
                number();
            } else if (isIdentifierStart(c)) {
                identifier();
            } else if (c == '(') {
                depth++;
                pos++;
            } else if (c == ')') {
                if (--depth < 0) {
                    throw error("unbalanced ')'");
                }
                pos++;
            } else if ("+-*/%^=!<>,@".indexOf(c) >= 0) {
                pos++;
            } else {
                throw error("unexpected character '" + c + "'");
            }
        }
        if (depth != 0) {
            throw error("unbalanced '('");
        }
    }

    private void identifier() {
        String name = word();
        String lower = name.toLowerCase(Locale.ROOT);
        int after = pos;
        boolean callFollows = skipSpaceAndComments() && text.charAt(pos) == '(';
        if (GROUPING.contains(lower)) {
            if (callFollows) {
                labelList();
            }
            return;
        }
        pos = after;
        if (callFollows || KEYWORDS.contains(lower) || isAggregationWithClause()) {
            return;
        }
        if (skipSpaceAndComments() && text.charAt(pos) == '{') {
            selector(name);
        } else {
            pos = after;
            selectors.add(new Selector(name, List.of()));
        }
    }

    // 'sum by (le) (...)': the aggregation name is followed by a grouping keyword, not by '('.
    private boolean isAggregationWithClause() {
        int after = pos;
        try {
            if (!skipSpaceAndComments() || !isIdentifierStart(text.charAt(pos))) {
                return false;
            }
            String next = word().toLowerCase(Locale.ROOT);
            return next.equals("by") || next.equals("without");
        } finally {
            pos = after;
        }
    }

    private void labelList() {
        pos++; // '('
        while (true) {
            if (!skipSpaceAndComments()) {
                throw error("unterminated label list");
            }
            char c = text.charAt(pos);
            if (c == ')') {
                pos++;
                return;
            }
            if (c == ',') {
                pos++;
            } else if (isIdentifierStart(c)) {
                groupingLabels.add(word());
            } else {
                throw error("unexpected '" + c + "' in a label list");
            }
        }
    }

    private void selector(String metric) {
        pos++; // '{'
        String name = metric;
        List<LabelMatcher> matchers = new ArrayList<>();
        while (true) {
            if (!skipSpaceAndComments()) {
                throw error("unterminated selector");
            }
            char c = text.charAt(pos);
            if (c == '}') {
                pos++;
                break;
            }
            if (c == ',') {
                pos++;
                continue;
            }
            if (!isIdentifierStart(c)) {
                throw error("expected a label name, found '" + c + "'");
            }
            String label = word();
            skipSpaceAndComments();
            String op = operator();
            skipSpaceAndComments();
            if (pos >= text.length() || "\"'`".indexOf(text.charAt(pos)) < 0) {
                throw error("expected a quoted value after " + label + op);
            }
            String value = string();
            if (label.equals("__name__") && op.equals("=")) {
                name = value;
            } else {
                matchers.add(new LabelMatcher(label, op, value));
            }
        }
        selectors.add(new Selector(name, List.copyOf(matchers)));
    }

    private String operator() {
        for (String op : List.of("=~", "!~", "!=", "=")) {
            if (text.startsWith(op, pos)) {
                pos += op.length();
                return op;
            }
        }
        throw error("expected one of " + OPERATORS);
    }

    private String string() {
        char quote = text.charAt(pos++);
        StringBuilder value = new StringBuilder();
        while (pos < text.length()) {
            char c = text.charAt(pos++);
            if (c == quote) {
                return value.toString();
            }
            if (c == '\\' && quote != '`' && pos < text.length()) {
                c = text.charAt(pos++);
            }
            value.append(c);
        }
        throw error("unterminated string");
    }

    private void skipBracket() {
        int depth = 0;
        do {
            char c = text.charAt(pos);
            if (c == '[') {
                depth++;
            } else if (c == ']') {
                depth--;
            }
            pos++;
        } while (depth > 0 && pos < text.length());
        if (depth > 0) {
            throw error("unbalanced '['");
        }
    }

    // $name, ${name} and ${name:format}
    private void variable() {
        pos++;
        if (pos < text.length() && text.charAt(pos) == '{') {
            int end = text.indexOf('}', pos);
            if (end < 0) {
                throw error("unterminated ${...}");
            }
            pos = end + 1;
        } else {
            while (pos < text.length() && (Character.isLetterOrDigit(text.charAt(pos)) || text.charAt(pos) == '_')) {
                pos++;
            }
        }
    }

    // 42, 0.5, 1e-3, 0x1F, and durations such as 5m or 1h30m
    private void number() {
        boolean hex = text.startsWith("0x", pos) || text.startsWith("0X", pos);
        pos++;
        while (pos < text.length()) {
            char c = text.charAt(pos);
            char previous = text.charAt(pos - 1);
            boolean exponentSign = !hex && (c == '+' || c == '-') && (previous == 'e' || previous == 'E');
            if (Character.isLetterOrDigit(c) || c == '.' || c == '_' || exponentSign) {
                pos++;
            } else {
                return;
            }
        }
    }

    private String word() {
        int start = pos;
        while (pos < text.length() && (isIdentifierStart(text.charAt(pos)) || Character.isDigit(text.charAt(pos)))) {
            pos++;
        }
        return text.substring(start, pos);
    }

    /** Skips white space and {@code #} comments; returns whether anything is left. */
    private boolean skipSpaceAndComments() {
        while (pos < text.length()) {
            char c = text.charAt(pos);
            if (Character.isWhitespace(c)) {
                pos++;
            } else if (c == '#') {
                int end = text.indexOf('\n', pos);
                pos = end < 0 ? text.length() : end + 1;
            } else {
                return true;
            }
        }
        return false;
    }

    private static boolean isIdentifierStart(char c) {
        return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == ':';
    }

    private IllegalArgumentException error(String message) {
        return new IllegalArgumentException(message + " at position " + pos + " of: " + text);
    }
}
