package com.example.payments.logging;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.core.Appender;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.LoggerContext;
import org.apache.logging.log4j.core.async.AsyncLoggerContextSelector;
import org.apache.logging.log4j.core.config.ConfigurationSource;
import org.apache.logging.log4j.core.config.DefaultConfiguration;
import org.apache.logging.log4j.core.config.xml.XmlConfiguration;
import org.apache.logging.log4j.core.impl.Log4jLogEvent;
import org.apache.logging.log4j.core.layout.PatternLayout;
import org.apache.logging.log4j.message.SimpleMessage;
import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.instanceOf;
import static org.hamcrest.Matchers.is;

class StdoutAppenderTest {

    private static final PatternLayout LAYOUT = PatternLayout.newBuilder()
            .withConfiguration(new DefaultConfiguration())
            .withPattern("%m%n")
            .build();

    @Test
    void theShippedConfigurationWritesThroughItAndFlushesPerBatchUnderTheAsyncLoggers() throws IOException {
        Properties component = new Properties();
        try (InputStream in = getClass().getClassLoader().getResourceAsStream("log4j2.component.properties")) {
            component.load(in);
        }
        assertThat(component.getProperty("log4j2.contextSelector"), is(AsyncLoggerContextSelector.class.getName()));

        ConfigurationSource source = ConfigurationSource.fromResource("log4j2.xml", getClass().getClassLoader());
        XmlConfiguration configuration = new XmlConfiguration(new LoggerContext("stdout-test"), source);
        configuration.initialize();
        try {
            Appender appender = configuration.getAppender("console");

            assertThat(appender, instanceOf(StdoutAppender.class));
            // This JVM's loggers are synchronous (pom.xml sets surefire's selector): every line flushed at once.
            assertThat(((StdoutAppender) appender).getImmediateFlush(), is(!AsyncLoggerContextSelector.isSelected()));
        } finally {
            configuration.stop();
        }
    }

    @Test
    void aBatchOfLinesGoesOutInOneWriteAtTheEndOfTheBatch() {
        Counting out = new Counting();
        StdoutAppender appender = StdoutAppender.onStream("test", LAYOUT, null, "batched-test", out, false);
        appender.start();

        for (int i = 0; i < 99; i++) {
            appender.append(line("line " + i, false));
        }
        assertThat("nothing written before the batch ends", out.writes.get(), is(0));
        appender.append(line("last", true));

        assertThat(out.writes.get(), is(1));
        assertThat(out.text().lines().count(), is(100L));
        assertThat(out.text().endsWith("last\n"), is(true));
        appender.stop();
    }

    @Test
    void withoutTheAsyncLoggersEveryLineIsWrittenAtOnce() {
        Counting out = new Counting();
        StdoutAppender appender = StdoutAppender.onStream("test", LAYOUT, null, "immediate-test", out, true);
        appender.start();

        for (int i = 0; i < 10; i++) {
            appender.append(line("line " + i, false));
        }

        assertThat(out.writes.get(), is(10));
        appender.stop();
    }

    @Test
    void stoppingWritesWhatIsBufferedAndLeavesTheStreamOpen() {
        Counting out = new Counting();
        StdoutAppender appender = StdoutAppender.onStream("test", LAYOUT, null, "stop-test", out, false);
        appender.start();
        appender.append(line("buffered", false));

        appender.stop();

        assertThat(out.text(), is("buffered\n"));
        assertThat(out.closed, is(false));
    }

    private static LogEvent line(String message, boolean endOfBatch) {
        Log4jLogEvent event = Log4jLogEvent.newBuilder()
                .setLoggerName("test")
                .setLevel(Level.INFO)
                .setMessage(new SimpleMessage(message))
                .build();
        event.setEndOfBatch(endOfBatch);
        return event;
    }

    private static final class Counting extends OutputStream {
        private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        private final AtomicInteger writes = new AtomicInteger();
        private volatile boolean closed;

        @Override
        public void write(int b) {
            writes.incrementAndGet();
            bytes.write(b);
        }

        @Override
        public void write(byte[] b, int off, int len) {
            writes.incrementAndGet();
            bytes.write(b, off, len);
        }

        @Override
        public void close() {
            closed = true;
        }

        String text() {
            return bytes.toString(StandardCharsets.UTF_8);
        }
    }
}
