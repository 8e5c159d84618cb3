package com.example.payments.carddata;

import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import java.util.logging.Filter;
import java.util.logging.Formatter;
import java.util.logging.LogRecord;
import java.util.logging.SimpleFormatter;

/**
 * A java.util.logging handler filter that rewrites every record before any formatter sees it: card numbers in the
 * message (after its parameters are filled in) and in the exception (messages of the whole cause and suppressed
 * chain) are masked by {@link PanDetector#mask(String)}. Because it works on the record, switching the handler's
 * formatter (text to JSON, or any other) cannot bypass it.
 *
 * <p>It also drops every record of Helidon's wire loggers ({@code Http1LoggingConnectionListener}): at DEBUG and
 * TRACE they print request lines, headers and bodies byte for byte, CVCs included, and no pattern can recognise a
 * CVC. Whatever level a forker sets on them, nothing they write reaches a handler that has this filter.
 *
 * <p>It also fixes the record's source (class and method) to none, so no formatter triggers JUL's caller inference,
 * a stack walk per line: {@code %2$s} in a format prints the logger name, also for a {@code Logger.logp} caller that
 * named its source.
 *
 * <p>Installed on Helidon's console handler by {@code logging.properties} (so it is in place from the first log
 * line) and on every other handler by {@link LogMasking#maskHandlers()}. Thread-safe and stateless.
 */
public final class CardDataLogFilter implements Filter {

    private static final List<String> WIRE_LOGGERS = List.of(
            "io.helidon.webserver.http1.Http1LoggingConnectionListener",
            "io.helidon.http.http1.Http1LoggingConnectionListener");
    // Formatter.formatMessage is what every formatter uses to fill in the parameters; this instance only lends it.
    private static final Formatter MESSAGES = new SimpleFormatter();

    private final Filter next;

    /** The filter on its own, as {@code logging.properties} creates it. */
    public CardDataLogFilter() {
        this(null);
    }

    /**
     * The filter in front of a handler's existing filter.
     *
     * @param next the filter the handler had, consulted after masking; {@code null} for none
     */
    public CardDataLogFilter(Filter next) {
        this.next = next;
    }

    @Override
    public boolean isLoggable(LogRecord record) {
        String logger = record.getLoggerName();
        if (logger != null && WIRE_LOGGERS.stream().anyMatch(logger::startsWith)) {
            return false;
        }
        mask(record);
        // No caller inference: asked for its source, a record walks the logging thread's stack (a StackWalker per
        // line, several microseconds on every access-log line). No format here prints the source; one that asks
        // for %2$s gets the logger name instead.
        record.setSourceClassName(null);
        record.setSourceMethodName(null);
        return next == null || next.isLoggable(record);
    }

    /**
     * Masks card numbers in a record, in place.
     *
     * @param record the record; its message becomes the formatted, masked text (parameters cleared) only when
     *               something was masked, and its exception a masked copy with the same stack trace
     */
    static void mask(LogRecord record) {
        String message = MESSAGES.formatMessage(record);
        String masked = PanDetector.mask(message);
        if (masked != message && !masked.equals(message)) {
            record.setMessage(masked);
            record.setParameters(null);
            record.setResourceBundle(null);
        }
        Throwable thrown = record.getThrown();
        if (thrown != null && anyPan(thrown, Collections.newSetFromMap(new IdentityHashMap<>()))) {
            record.setThrown(MaskedThrowable.of(thrown));
        }
    }

    private static boolean anyPan(Throwable error, Set<Throwable> seen) {
        if (error == null || !seen.add(error)) {
            return false;
        }
        if (PanDetector.containsPan(error.toString())) {
            return true;
        }
        for (Throwable suppressed : error.getSuppressed()) {
            if (anyPan(suppressed, seen)) {
                return true;
            }
        }
        return anyPan(error.getCause(), seen);
    }
}
