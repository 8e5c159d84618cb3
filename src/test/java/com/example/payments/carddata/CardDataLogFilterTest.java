package com.example.payments.carddata;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.logging.Filter;
import java.util.logging.Formatter;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.SimpleFormatter;
import java.util.logging.StreamHandler;

import io.helidon.logging.jul.HelidonJsonFormatter;

import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.not;

/**
 * The log layers of the last line of defence: a record's message, parameters and exception chain, any formatter, and
 * the console stream.
 */
class CardDataLogFilterTest {

    private static final String PAN = "4111111111111111";

    @Test
    void aCardNumberInAParameterIsMaskedInTheFormattedMessage() {
        LogRecord record = record("Declined card {0} for {1}", PAN, "m_1");
        assertThat(new CardDataLogFilter().isLoggable(record), is(true));
        assertThat(new SimpleFormatter().formatMessage(record), is("Declined card ************1111 for m_1"));
    }

    @Test
    void aCardNumberSplitBetweenTheMessageAndAParameterIsMasked() {
        LogRecord record = record("card 4111 1111 {0}", "1111 1111");
        new CardDataLogFilter().isLoggable(record);
        assertThat(new SimpleFormatter().formatMessage(record), is("card **** **** **** 1111"));
    }

    @Test
    void aRecordWithoutCardDataKeepsItsParameters() {
        Object[] parameters = {42L, "m_1"};
        LogRecord record = record("{0,number,#} ms for {1}", parameters);
        new CardDataLogFilter().isLoggable(record);
        assertThat(record.getParameters() == parameters, is(true));
        assertThat(record.getMessage(), is("{0,number,#} ms for {1}"));
    }

    @Test
    void theWholeExceptionChainIsMaskedAndKeepsItsShape() {
        NumberFormatException root = new NumberFormatException("For input string: \"{\"number\":\"" + PAN + "\"}\"");
        IllegalStateException suppressed = new IllegalStateException("close failed on 5555-5555-5555-4444");
        root.addSuppressed(suppressed);
        RuntimeException thrown = new UncheckedIOException("reading body", new IOException("wrapped", root));
        LogRecord record = record("Internal server error");
        record.setThrown(thrown);

        new CardDataLogFilter().isLoggable(record);
        String printed = stackTrace(record.getThrown());

        assertThat(printed, not(containsString(PAN)));
        assertThat(printed, not(containsString("5555-5555-5555-4444")));
        assertThat(printed, containsString("java.io.UncheckedIOException: reading body"));
        assertThat(printed, containsString("Caused by: java.io.IOException: wrapped"));
        assertThat(printed, containsString("Caused by: java.lang.NumberFormatException: For input string: "
                                           + "\"{\"number\":\"************1111\"}\""));
        assertThat(printed, containsString("Suppressed: java.lang.IllegalStateException: close failed on "
                                           + "****-****-****-4444"));
        assertThat(printed, containsString("at " + CardDataLogFilterTest.class.getName()));
        assertThat(record.getThrown().getStackTrace(), is(thrown.getStackTrace()));
    }

    @Test
    void aCauseCycleDoesNotBreakLogging() {
        IllegalStateException first = new IllegalStateException("card " + PAN);
        IllegalArgumentException second = new IllegalArgumentException("again", first);
        first.initCause(second);
        LogRecord record = record("cycle");
        record.setThrown(first);
        new CardDataLogFilter().isLoggable(record);
        assertThat(stackTrace(record.getThrown()), not(containsString(PAN)));
    }

    @Test
    void switchingTheFormatterToJsonCannotBypassTheFilter() {
        assertThat(published(new HelidonJsonFormatter()), not(containsString(PAN)));
        assertThat(published(new SimpleFormatter()), not(containsString(PAN)));
        assertThat(published(new HelidonJsonFormatter()), containsString("************1111"));
    }

    @Test
    void helidonsWireLoggersNeverReachAHandler() {
        LogRecord record = record("recv data: {\"cvc\":\"737\"}");
        record.setLoggerName("io.helidon.webserver.http1.Http1LoggingConnectionListener.recv");
        assertThat(new CardDataLogFilter().isLoggable(record), is(false));
    }

    @Test
    void theHandlersOwnFilterStillDecides() {
        Filter none = record -> false;
        assertThat(new CardDataLogFilter(none).isLoggable(record("anything")), is(false));
    }

    @Test
    void theConsoleStreamMasksWholeLinesWrittenInPieces() {
        ByteArrayOutputStream console = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(new MaskingOutputStream(console), true, StandardCharsets.UTF_8);
        out.print("number 4111 1111");
        out.flush();
        out.print(" 1111 11");
        out.print("11 é\n");
        out.println("2026-11-30T20:05:17.979 nothing to mask");
        assertThat(console.toString(StandardCharsets.UTF_8),
                   is("number **** **** **** 1111 é\n2026-11-30T20:05:17.979 nothing to mask"
                      + System.lineSeparator()));
    }

    @Test
    void theConsoleStreamMasksCardNumbersWithUnicodeSeparatorsAndKeepsOtherBytes() {
        ByteArrayOutputStream console = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(new MaskingOutputStream(console), true, StandardCharsets.UTF_8);
        out.print("en dash 4111\u20131111\u20131111\u20131111, no-break 4111\u00A01111\u00A01111\u00A01111 \u00e9\n");
        out.print("zero-width 4111\u200B1111\u200B1111\u200B1111 and dots 4111.1111.1111.1111\n");
        assertThat(console.toString(StandardCharsets.UTF_8),
                   is("en dash ****\u2013****\u2013****\u20131111, no-break ****\u00A0****\u00A0****\u00A01111 \u00e9\n"
                      + "zero-width ****\u200B****\u200B****\u200B1111 and dots ****.****.****.1111\n"));
        // A line that is not UTF-8 (a Latin-1 byte) is still masked, and its other bytes pass unchanged.
        ByteArrayOutputStream latin1 = new ByteArrayOutputStream();
        PrintStream raw = new PrintStream(new MaskingOutputStream(latin1), true, StandardCharsets.ISO_8859_1);
        raw.print("caf\u00e9 4111.1111.1111.1111\n");
        assertThat(latin1.toByteArray(), is("caf\u00e9 ****.****.****.1111\n".getBytes(StandardCharsets.ISO_8859_1)));
    }

    @Test
    void anOverlongLineIsCutOutsideARunOfDigits() {
        ByteArrayOutputStream console = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(new MaskingOutputStream(console), true, StandardCharsets.UTF_8);
        out.print("x".repeat(70 * 1024) + " " + PAN);
        out.print(" end\n");
        assertThat(console.toString(StandardCharsets.UTF_8), not(containsString(PAN)));
        assertThat(console.toString(StandardCharsets.UTF_8), containsString("************1111 end\n"));
    }

    private static String published(Formatter formatter) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        StreamHandler handler = new StreamHandler(bytes, new SimpleFormatter());
        handler.setFilter(new CardDataLogFilter());
        handler.setFormatter(formatter);
        LogRecord record = record("card {0}", PAN);
        record.setThrown(new IllegalArgumentException("bad " + PAN));
        handler.publish(record);
        handler.flush();
        return bytes.toString(StandardCharsets.UTF_8);
    }

    private static LogRecord record(String message, Object... parameters) {
        LogRecord record = new LogRecord(Level.WARNING, message);
        record.setLoggerName("test");
        record.setParameters(parameters.length == 0 ? null : parameters);
        return record;
    }

    private static String stackTrace(Throwable thrown) {
        StringWriter text = new StringWriter();
        thrown.printStackTrace(new PrintWriter(text));
        return text.toString();
    }
}
