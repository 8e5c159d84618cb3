package com.example.payments.carddata;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.core.Layout;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.config.DefaultConfiguration;
import org.apache.logging.log4j.core.impl.Log4jLogEvent;
import org.apache.logging.log4j.core.layout.PatternLayout;
import org.apache.logging.log4j.layout.template.json.JsonTemplateLayout;
import org.apache.logging.log4j.message.Message;
import org.apache.logging.log4j.message.ParameterizedMessage;
import org.apache.logging.log4j.message.SimpleMessage;
import org.apache.logging.log4j.message.StringMapMessage;
import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.not;

/**
 * The log layers of the last line of defence: a log event's message, parameters, fields and exception chain, in both
 * layouts of {@code log4j2.xml} (JSON and text), and the console stream.
 */
class CardMaskingLayoutTest {

    private static final String PAN = "4111111111111111";
    private static final Layout<?> JSON = CardMaskingLayout.create(JsonTemplateLayout.newBuilder()
            .setConfiguration(new DefaultConfiguration())
            .setEventTemplateUri("classpath:logging/ecs-layout.json")
            .build());
    private static final Layout<?> TEXT = CardMaskingLayout.create(PatternLayout.newBuilder()
            .withPattern("%level [%X{requestId}] %logger: %message%notEmpty{ %K}%n%throwable")
            .build());

    @Test
    void aCardNumberInAParameterIsMaskedInTheFormattedMessage() {
        LogEvent event = event(new ParameterizedMessage("Declined card {} for {}", PAN, "m_1"), null);
        assertThat(text(event), containsString("test: Declined card ************1111 for m_1"));
        assertThat(json(event), containsString("\"message\":\"Declined card ************1111 for m_1\""));
    }

    @Test
    void aCardNumberSplitBetweenTheMessageAndAParameterIsMasked() {
        LogEvent event = event(new ParameterizedMessage("card 4111 1111 {}", "1111 1111"), null);
        assertThat(text(event), containsString("card **** **** **** 1111"));
        assertThat(json(event), containsString("card **** **** **** 1111"));
    }

    @Test
    void aLineWithoutCardDataIsWrittenAsTheInnerLayoutMadeIt() {
        LogEvent event = event(new ParameterizedMessage("{} ms for {} at 2026-11-30T20:05:17.979", 42L, "m_1"),
                               null);
        assertThat(text(event), is("WARN [] test: 42 ms for m_1 at 2026-11-30T20:05:17.979" + System.lineSeparator()));
    }

    @Test
    void theWholeExceptionChainIsMaskedAndKeepsItsShape() {
        NumberFormatException root = new NumberFormatException("For input string: \"{\"number\":\"" + PAN + "\"}\"");
        IllegalStateException suppressed = new IllegalStateException("close failed on 5555-5555-5555-4444");
        root.addSuppressed(suppressed);
        RuntimeException thrown = new UncheckedIOException("reading body", new IOException("wrapped", root));
        LogEvent event = event(new SimpleMessage("Internal server error"), thrown);

        for (String printed : new String[] {text(event), json(event)}) {
            assertThat(printed, not(containsString(PAN)));
            assertThat(printed, not(containsString("5555-5555-5555-4444")));
            assertThat(printed, containsString("java.io.UncheckedIOException: reading body"));
            assertThat(printed, containsString("Caused by: java.io.IOException: wrapped"));
            assertThat(printed, containsString("Caused by: java.lang.NumberFormatException: For input string: "));
            assertThat(printed, containsString("************1111"));
            assertThat(printed, containsString("Suppressed: java.lang.IllegalStateException: close failed on "
                                               + "****-****-****-4444"));
            assertThat(printed, containsString("at " + CardMaskingLayoutTest.class.getName()));
        }
        assertThat(json(event), containsString("\"error.type\":\"java.io.UncheckedIOException\""));
    }

    @Test
    void aCauseCycleDoesNotBreakLogging() {
        IllegalStateException first = new IllegalStateException("card " + PAN);
        IllegalArgumentException second = new IllegalArgumentException("again", first);
        first.initCause(second);
        LogEvent event = event(new SimpleMessage("cycle"), first);
        assertThat(text(event), not(containsString(PAN)));
        assertThat(json(event), not(containsString(PAN)));
    }

    @Test
    void structuredFieldsAndTheMdcAreMaskedToo() {
        LogEvent event = Log4jLogEvent.newBuilder().setLoggerName("test").setLevel(Level.INFO)
                .setMessage(new StringMapMessage().with("merchant.id", "m " + PAN))
                .setContextData(new org.apache.logging.log4j.core.impl.JdkMapAdapterStringMap(
                        new java.util.HashMap<>(java.util.Map.of("requestId", PAN)), true))
                .build();
        assertThat(json(event), not(containsString(PAN)));
        assertThat(json(event), containsString("\"merchant.id\":\"m ************1111\""));
        assertThat(text(event), not(containsString(PAN)));
    }

    @Test
    void helidonsWireLoggersWriteNothing() {
        LogEvent event = Log4jLogEvent.newBuilder()
                .setLoggerName("io.helidon.webserver.http1.Http1LoggingConnectionListener.recv")
                .setLevel(Level.DEBUG).setMessage(new SimpleMessage("recv data: {\"cvc\":\"737\"}")).build();
        assertThat(text(event), is(""));
        assertThat(json(event), is(""));
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

    private static LogEvent event(Message message, Throwable thrown) {
        return Log4jLogEvent.newBuilder().setLoggerName("test").setLevel(Level.WARN).setMessage(message)
                .setThrown(thrown).build();
    }

    private static String text(LogEvent event) {
        return (String) TEXT.toSerializable(event);
    }

    private static String json(LogEvent event) {
        return (String) JSON.toSerializable(event);
    }
}
