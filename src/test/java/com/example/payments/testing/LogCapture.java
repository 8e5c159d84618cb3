package com.example.payments.testing;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;

import com.example.payments.http.RequestIds;

import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.LoggerContext;
import org.apache.logging.log4j.core.appender.AbstractAppender;
import org.apache.logging.log4j.core.config.Configuration;
import org.apache.logging.log4j.core.config.Property;
import org.apache.logging.log4j.message.MapMessage;

/**
 * Captures every log event of this JVM (Log4j's root logger: java.util.logging and SLF4J lines included, through
 * their bridges), each as {@code LEVEL logger: message} (a map message's fields as {@code key=value} after it, then
 * the request id of the MDC as {@code http.request.id=...}), with
 * its stack trace, so tests can assert what never reaches a log (card numbers, CVCs). Raw: no masking layout runs
 * here, so a card number the code logs is seen.
 */
public final class LogCapture implements AutoCloseable {

    private final List<String> lines = new CopyOnWriteArrayList<>();
    private final boolean requestIds;
    private final Appender appender = new Appender();

    private LogCapture(boolean requestIds) {
        this.requestIds = requestIds;
    }

    /**
     * Starts capturing on the root logger.
     *
     * @return the capture; close it to stop
     */
    public static LogCapture start() {
        return start(false);
    }

    /**
     * Starts capturing on the root logger, each event as {@code [<request id>]: <message>} with the request id the
     * logging thread's MDC held when it logged (what {@code %X{requestId}} formats), empty outside a request.
     *
     * @return the capture; close it to stop
     */
    public static LogCapture withRequestIds() {
        return start(true);
    }

    private static LogCapture start(boolean requestIds) {
        LogCapture capture = new LogCapture(requestIds);
        capture.appender.start();
        LoggerContext context = (LoggerContext) LogManager.getContext(false);
        Configuration configuration = context.getConfiguration();
        configuration.getRootLogger().addAppender(capture.appender, Level.ALL, null);
        context.updateLoggers();
        return capture;
    }

    private void append(LogEvent event) {
        StringBuilder line = new StringBuilder();
        if (requestIds) {
            String id = event.getContextData().getValue(RequestIds.MDC_KEY);
            line.append('[').append(id == null ? "" : id).append("]: ");
        } else {
            line.append(event.getLevel()).append(' ').append(event.getLoggerName()).append(": ");
        }
        line.append(event.getMessage().getFormattedMessage());
        if (event.getMessage() instanceof MapMessage<?, ?> map) {
            map.forEach((key, value) -> line.append(' ').append(key).append('=').append(value));
        }
        String requestId = event.getContextData().getValue(RequestIds.MDC_KEY);
        if (!requestIds && requestId != null) {
            line.append(" http.request.id=").append(requestId);
        }
        line.append('\n');
        if (event.getThrown() != null) {
            StringWriter trace = new StringWriter();
            event.getThrown().printStackTrace(new PrintWriter(trace));
            line.append(trace);
        }
        lines.add(line.toString());
    }

    /**
     * Everything captured, one string.
     *
     * @return text
     */
    public String text() {
        return String.join("", lines);
    }

    @Override
    public void close() {
        LoggerContext context = (LoggerContext) LogManager.getContext(false);
        context.getConfiguration().getRootLogger().removeAppender(appender.getName());
        context.updateLoggers();
        appender.stop();
    }

    private final class Appender extends AbstractAppender {
        private Appender() {
            super("capture-" + UUID.randomUUID(), null, null, true, Property.EMPTY_ARRAY);
        }

        @Override
        public void append(LogEvent event) {
            LogCapture.this.append(event);
        }
    }
}
